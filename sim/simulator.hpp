// The event loop: simulated time and callbacks, nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/units.hpp"

namespace hopsim::sim {

/// A handle to a scheduled event, for cancel(). Stale handles are harmless.
struct EventId {
  std::uint64_t seq = 0;
  std::uint32_t slot = 0;
};

/// Events run in (time, sequence) order: equal times run in the order they were scheduled,
/// so that two runs of the same input are identical.
class Simulator {
 public:
  using Callback = std::function<void()>;

  Time now() const { return now_; }

  /// Runs `cb` at time `at` >= now().
  EventId schedule_at(Time at, Callback cb);
  /// Runs `cb` at now() + delay, delay >= 0.
  EventId schedule_in(Time delay, Callback cb) { return schedule_at(now_ + delay, std::move(cb)); }
  /// Lazy: the heap entry stays and is skipped when it reaches the top.
  void cancel(EventId id);

  /// Runs events until none remain.
  void run() { run_until(Time::max()); }
  /// Runs events until none remain or the next one is later than `end`.
  void run_until(Time end);

  std::uint64_t events_run() const { return events_run_; }
  std::size_t pending() const { return heap_.size(); }

 private:
  struct Entry {
    Time at;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  struct Slot {
    std::uint64_t seq = 0;  // 0: free or cancelled
    Callback cb;
  };

  Time now_;
  std::uint64_t next_seq_ = 1;
  std::uint64_t events_run_ = 0;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;  // callbacks live here, not in the heap, so cancel is O(1)
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace hopsim::sim
