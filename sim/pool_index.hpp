// An open-addressing hash index from short id lists kept in a pool (routes, signatures) to
// ids: no allocation per key, one probe sequence per lookup.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/resource.hpp"

namespace hopsim::sim {

class PoolIndex {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  explicit PoolIndex(const std::vector<ResourceId>* pool) : pool_(pool), slots_(64) {}

  /// The id stored for the list pool[begin, begin + size), or kNone.
  std::uint32_t find(std::uint32_t begin, std::uint32_t size) const {
    const std::uint32_t h = hash(begin, size);
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.id == kNone) {
        return kNone;
      }
      if (s.id != kTomb && s.hash == h && equal(s, begin, size)) {
        return s.id;
      }
    }
  }

  /// Maps the list pool[begin, begin + size) to `id` (replacing any id it had).
  void set(std::uint32_t begin, std::uint32_t size, std::uint32_t id) {
    if (2 * (used_ + 1) > slots_.size()) {
      grow();
    }
    const std::uint32_t h = hash(begin, size);
    std::size_t free = slots_.size();
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.id == kNone) {
        Slot& at = free < slots_.size() ? slots_[free] : s;
        used_ += at.id == kNone ? 1 : 0;
        at = Slot{begin, size, id, h};
        return;
      }
      if (s.id == kTomb) {
        free = std::min(free, i);
      } else if (s.hash == h && equal(s, begin, size)) {
        s.id = id;
        return;
      }
    }
  }

  /// Forgets the list pool[begin, begin + size) if it maps to `id`.
  void erase(std::uint32_t begin, std::uint32_t size, std::uint32_t id) {
    const std::uint32_t h = hash(begin, size);
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.id == kNone) {
        return;
      }
      if (s.id != kTomb && s.hash == h && equal(s, begin, size)) {
        if (s.id == id) {
          s.id = kTomb;
        }
        return;
      }
    }
  }

  /// Forgets every list (the pool is about to be rewritten).
  void clear() {
    std::fill(slots_.begin(), slots_.end(), Slot{});
    used_ = 0;
  }

 private:
  static constexpr std::uint32_t kTomb = kNone - 1;

  struct Slot {
    std::uint32_t begin = 0;
    std::uint32_t size = 0;
    std::uint32_t id = kNone;
    std::uint32_t hash = 0;
  };

  const std::vector<ResourceId>* pool_;
  std::vector<Slot> slots_;  // a power of two; at most half used (live or tombstones)
  std::size_t used_ = 0;

  std::size_t mask() const { return slots_.size() - 1; }

  std::uint32_t hash(std::uint32_t begin, std::uint32_t size) const {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ size;
    for (std::uint32_t i = 0; i < size; ++i) {
      h = (h ^ (*pool_)[begin + i]) * 0xbf58476d1ce4e5b9ULL;
      h ^= h >> 29;
    }
    return static_cast<std::uint32_t>(h ^ (h >> 32));
  }

  bool equal(const Slot& s, std::uint32_t begin, std::uint32_t size) const {
    return s.size == size && std::equal(pool_->begin() + s.begin, pool_->begin() + s.begin + size,
                                        pool_->begin() + begin);
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    std::size_t live = 0;
    for (const Slot& s : old) {
      live += s.id != kNone && s.id != kTomb ? 1 : 0;
    }
    std::size_t cap = 64;
    while (cap < 3 * (live + 1)) {
      cap *= 2;
    }
    slots_.assign(cap, Slot{});
    used_ = 0;
    for (const Slot& s : old) {
      if (s.id != kNone && s.id != kTomb) {
        std::size_t i = s.hash & mask();
        while (slots_[i].id != kNone) {
          i = (i + 1) & mask();
        }
        slots_[i] = s;
        ++used_;
      }
    }
  }
};

}  // namespace hopsim::sim
