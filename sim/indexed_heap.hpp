// A binary min-heap over dense ids whose keys can change in place (O(log n) per change).
#pragma once

#include <cstdint>
#include <vector>

namespace hopsim::sim {

/// Min-heap of ids ordered by (key, id); each id is in it at most once. Keys sit in the heap
/// array itself, so that sifting compares without indirection.
template <typename Key>
class IndexedHeap {
 public:
  bool empty() const { return heap_.empty(); }

  std::size_t size() const { return heap_.size(); }

  /// The id with the smallest (key, id); the heap must not be empty.
  std::uint32_t top() const { return heap_.front().id; }

  /// The key of an id that is in the heap.
  const Key& key(std::uint32_t id) const { return heap_[pos_[id]].key; }

  bool contains(std::uint32_t id) const { return id < pos_.size() && pos_[id] != kAbsent; }

  /// Inserts `id` with key `k`, or moves it to key `k` if it is already in.
  void set(std::uint32_t id, Key k) {
    if (id >= pos_.size()) {
      pos_.resize(id + 1, kAbsent);
    }
    if (pos_[id] == kAbsent) {
      heap_.push_back(Node{k, id});
      up(static_cast<std::uint32_t>(heap_.size() - 1));
      return;
    }
    const std::uint32_t at = pos_[id];
    const bool earlier = k < heap_[at].key;
    heap_[at].key = k;
    if (earlier) {
      up(at);
    } else {
      down(at);
    }
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
    up(at);
    down(pos_[last.id]);
  }

  /// Removes and returns the top id.
  std::uint32_t pop() {
    const std::uint32_t id = top();
    erase(id);
    return id;
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
