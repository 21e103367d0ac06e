// The indexed heap: set, defer (keys raised lazily), erase, batches and pop_until give the
// answers of an ordered set of (key, id) kept up to date at every step.
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "sim/indexed_heap.hpp"

using hopsim::sim::IndexedHeap;

namespace {

struct Reference {
  std::set<std::pair<std::int64_t, std::uint32_t>> order;
  std::vector<std::int64_t> key = std::vector<std::int64_t>(64, -1);  // -1: absent

  void set(std::uint32_t id, std::int64_t k) {
    erase(id);
    key[id] = k;
    order.emplace(k, id);
  }

  void erase(std::uint32_t id) {
    if (key[id] >= 0) {
      order.erase({key[id], id});
      key[id] = -1;
    }
  }
};

}  // namespace

TEST_CASE("deferred keys give the answers of keys set at once") {
  std::mt19937_64 rng(7);
  IndexedHeap<std::int64_t> heap;
  Reference ref;
  std::int64_t now = 0;
  for (int step = 0; step < 20'000; ++step) {
    const auto id = static_cast<std::uint32_t>(rng() % 64);
    const auto k = now + static_cast<std::int64_t>(rng() % 1000);
    const bool batch = step % 50 == 0 && heap.begin_batch(rng() % 200);
    const int changes = batch ? 40 : 1;
    for (int i = 0; i < changes; ++i) {
      const auto which = static_cast<std::uint32_t>(rng() % 64);
      const auto key = now + static_cast<std::int64_t>(rng() % 1000);
      switch (rng() % 4) {
        case 0:
          heap.set(which, key);
          ref.set(which, key);
          break;
        case 1:
        case 2:
          heap.defer(which, key);
          ref.set(which, key);
          break;
        default:
          heap.erase(which);
          ref.erase(which);
      }
    }
    heap.end_batch();
    REQUIRE(heap.size() == ref.order.size());
    if (!ref.order.empty()) {
      CHECK(heap.top() == ref.order.begin()->second);
    }
    CHECK(heap.contains(id) == (ref.key[id] >= 0));
    if (heap.contains(id)) {
      CHECK(heap.key(id) == ref.key[id]);
    }
    if (step % 7 == 0) {
      now = k;
      std::vector<std::pair<std::int64_t, std::uint32_t>> out;
      heap.pop_until(now, out);
      std::vector<std::pair<std::int64_t, std::uint32_t>> want;
      while (!ref.order.empty() && ref.order.begin()->first <= now) {
        want.push_back(*ref.order.begin());
        ref.erase(ref.order.begin()->second);
      }
      REQUIRE(out == want);
    }
  }
}
