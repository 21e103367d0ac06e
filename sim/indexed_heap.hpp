// A binary min-heap over dense ids whose keys can change in place (O(log n) per change).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hopsim::sim {

/// Min-heap of ids ordered by (key, id); each id is in it at most once. Keys sit in the heap
/// array itself, so that sifting compares without indirection.
///
/// A key may also be raised lazily (defer): the id's node keeps its old, smaller key as a lower
/// bound, and takes its key only when it reaches the top. Every answer (top, key, pop,
/// pop_until) is the one the heap would give had each key been set at once.
template <typename Key>
class IndexedHeap {
 public:
  bool empty() const { return heap_.empty(); }

  std::size_t size() const { return heap_.size(); }

  /// The id with the smallest (key, id); the heap must not be empty.
  std::uint32_t top() {
    settle_top();
    return heap_.front().id;
  }

  /// The key of an id that is in the heap.
  const Key& key(std::uint32_t id) const { return key_[id]; }

  bool contains(std::uint32_t id) const { return id < pos_.size() && pos_[id] != kAbsent; }

  /// Inserts `id` with key `k`, or moves it to key `k` if it is already in.
  void set(std::uint32_t id, Key k) {
    if (id >= pos_.size()) {
      const std::size_t n = std::max<std::size_t>(id + 1, 2 * pos_.size());
      pos_.resize(n, kAbsent);
      key_.resize(n);
    }
    key_[id] = k;
    if (pos_[id] == kAbsent) {
      heap_.push_back(Node{k, id});
      pos_[id] = static_cast<std::uint32_t>(heap_.size() - 1);
      if (!batch_) {
        up(pos_[id]);
      }
      return;
    }
    const std::uint32_t at = pos_[id];
    const bool earlier = k < heap_[at].key;
    heap_[at].key = k;
    if (batch_) {
      return;
    }
    if (earlier) {
      up(at);
    } else {
      down(at);
    }
  }

  /// As set(), but a key that does not move earlier is only recorded: the node sinks to its
  /// place when it reaches the top, so a key raised again before then costs no sifting. Pays
  /// where keys move back and forth and few reach the top in between.
  void defer(std::uint32_t id, Key k) {
    if (!contains(id) || k < heap_[pos_[id]].key) {
      set(id, k);
      return;
    }
    key_[id] = k;
  }

  /// Removes `id` if it is in.
  void erase(std::uint32_t id) {
    if (!contains(id)) {
      return;
    }
    const std::uint32_t at = pos_[id];
    pos_[id] = kAbsent;
    const Node last = heap_.back();
    heap_.pop_back();
    if (last.id == id) {
      return;
    }
    heap_[at] = last;
    pos_[last.id] = at;
    if (!batch_) {
      up(at);
      down(pos_[last.id]);
    }
  }

  /// Many changes at once: set() and erase() leave the order alone until end_batch()
  /// restores it in one pass (Floyd's), which is cheaper once `changes` log n exceeds about
  /// 2n. Returns whether it batches (top, pop and pop_until must wait for end_batch then).
  bool begin_batch(std::size_t changes) {
    std::size_t log_n = 1;
    while ((std::size_t{1} << log_n) < heap_.size() + changes) {
      ++log_n;
    }
    batch_ = changes * log_n > 2 * (heap_.size() + changes);
    return batch_;
  }

  void end_batch() {
    if (!batch_) {
      return;
    }
    batch_ = false;
    for (std::size_t i = heap_.size() / 2; i-- > 0;) {
      down(static_cast<std::uint32_t>(i));
    }
  }

  /// Asks the cache for the position of `id` ahead of a set() or erase(); then, once that
  /// has arrived, prefetch_node() for its node.
  void prefetch(std::uint32_t id) const {
    if (id < pos_.size()) {
      __builtin_prefetch(&pos_[id]);
    }
  }

  void prefetch_node(std::uint32_t id) const {
    if (id < pos_.size() && pos_[id] != kAbsent) {
      __builtin_prefetch(&heap_[pos_[id]]);
    }
  }

  /// Removes and returns the top id.
  std::uint32_t pop() {
    const std::uint32_t id = top();
    erase(id);
    return id;
  }

  /// Removes every id whose key is <= `limit`, appending (key, id) to `out` in (key, id)
  /// order. Pops one by one (log n each) until that has cost about as much as one pass over
  /// the heap and a rebuild (about 2n), then finishes with that pass: never much worse than
  /// the better of the two (a symmetric collective ends with every entry due at once).
  template <typename Out>
  void pop_until(const Key& limit, Out& out) {
    std::size_t log_n = 1;
    while ((std::size_t{1} << log_n) < heap_.size()) {
      ++log_n;
    }
    const std::size_t switch_after = 2 * heap_.size() / log_n;
    for (std::size_t popped = 0; !empty(); ++popped) {
      settle_top();
      if (limit < heap_.front().key) {
        break;
      }
      if (popped == switch_after) {
        pop_bulk(limit, out);
        return;
      }
      out.emplace_back(heap_.front().key, heap_.front().id);
      pop();
    }
  }

 private:
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};

  struct Node {
    Key key;
    std::uint32_t id;

    bool operator<(const Node& o) const { return key < o.key || (!(o.key < key) && id < o.id); }
  };

  std::vector<Node> heap_;
  std::vector<std::uint32_t> pos_;
  std::vector<Key> key_;  // per id: its key; its node's key may be smaller (deferred)
  bool batch_ = false;

  // Sinks deferred nodes from the top until the top holds its own key: then it is the least
  // (key, id), since every node's key is at most its id's.
  void settle_top() {
    while (heap_.front().key < key_[heap_.front().id]) {
      heap_.front().key = key_[heap_.front().id];
      down(0);
    }
  }

  // Gives every node its key (the caller restores the order).
  void settle_all() {
    for (Node& node : heap_) {
      node.key = key_[node.id];
    }
  }

  template <typename Out>
  void pop_bulk(const Key& limit, Out& out) {
    settle_all();
    const auto due =
        std::partition(heap_.begin(), heap_.end(), [&](const Node& n) { return limit < n.key; });
    std::sort(due, heap_.end());
    for (auto it = due; it != heap_.end(); ++it) {
      pos_[it->id] = kAbsent;
      out.emplace_back(it->key, it->id);
    }
    heap_.erase(due, heap_.end());
    for (std::size_t i = heap_.size() / 2; i-- > 0;) {
      down(static_cast<std::uint32_t>(i));
    }
    for (std::uint32_t i = 0; i < heap_.size(); ++i) {
      pos_[heap_[i].id] = i;
    }
  }

  void up(std::uint32_t at) {
    const Node node = heap_[at];
    while (at > 0) {
      const std::uint32_t parent = (at - 1) / 2;
      if (!(node < heap_[parent])) {
        break;
      }
      heap_[at] = heap_[parent];
      pos_[heap_[at].id] = at;
      at = parent;
    }
    heap_[at] = node;
    pos_[node.id] = at;
  }

  void down(std::uint32_t at) {
    const Node node = heap_[at];
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      std::uint32_t child = 2 * at + 1;
      if (child >= n) {
        break;
      }
      if (child + 1 < n && heap_[child + 1] < heap_[child]) {
        ++child;
      }
      if (!(heap_[child] < node)) {
        break;
      }
      heap_[at] = heap_[child];
      pos_[heap_[at].id] = at;
      at = child;
    }
    heap_[at] = node;
    pos_[node.id] = at;
  }
};

}  // namespace hopsim::sim
