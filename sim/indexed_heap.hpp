// A binary min-heap over dense ids whose keys can change in place (O(log n) per change).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace hopsim::sim {

/// Min-heap of ids ordered by (key, id); each id is in it at most once.
template <typename Key>
class IndexedHeap {
 public:
  bool empty() const { return heap_.empty(); }

  std::size_t size() const { return heap_.size(); }

  /// The id with the smallest (key, id); the heap must not be empty.
  std::uint32_t top() const { return heap_.front(); }

  const Key& key(std::uint32_t id) const { return key_[id]; }

  bool contains(std::uint32_t id) const { return id < pos_.size() && pos_[id] != kAbsent; }

  /// Inserts `id` with key `k`, or moves it to key `k` if it is already in.
  void set(std::uint32_t id, Key k) {
    if (id >= pos_.size()) {
      pos_.resize(id + 1, kAbsent);
      key_.resize(id + 1);
    }
    if (pos_[id] == kAbsent) {
      key_[id] = k;
      pos_[id] = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back(id);
      up(pos_[id]);
      return;
    }
    const bool earlier = k < key_[id];
    key_[id] = k;
    if (earlier) {
      up(pos_[id]);
    } else {
      down(pos_[id]);
    }
  }

  /// Removes `id` if it is in.
  void erase(std::uint32_t id) {
    if (!contains(id)) {
      return;
    }
    const std::uint32_t at = pos_[id];
    pos_[id] = kAbsent;
    const std::uint32_t last = heap_.back();
    heap_.pop_back();
    if (last == id) {
      return;
    }
    heap_[at] = last;
    pos_[last] = at;
    up(at);
    down(pos_[last]);
  }

  /// Removes and returns the top id.
  std::uint32_t pop() {
    const std::uint32_t id = heap_.front();
    erase(id);
    return id;
  }

 private:
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};
  std::vector<std::uint32_t> heap_;
  std::vector<std::uint32_t> pos_;
  std::vector<Key> key_;

  bool before(std::uint32_t a, std::uint32_t b) const {
    return key_[a] < key_[b] || (!(key_[b] < key_[a]) && a < b);
  }

  void place(std::uint32_t at, std::uint32_t id) {
    heap_[at] = id;
    pos_[id] = at;
  }

  void up(std::uint32_t at) {
    const std::uint32_t id = heap_[at];
    while (at > 0) {
      const std::uint32_t parent = (at - 1) / 2;
      if (!before(id, heap_[parent])) {
        break;
      }
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, id);
  }

  void down(std::uint32_t at) {
    const std::uint32_t id = heap_[at];
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      std::uint32_t child = 2 * at + 1;
      if (child >= n) {
        break;
      }
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) {
        ++child;
      }
      if (!before(heap_[child], id)) {
        break;
      }
      place(at, heap_[child]);
      at = child;
    }
    place(at, id);
  }
};

}  // namespace hopsim::sim
