// The event loop: a binary heap of (time, seq) entries pointing at callback slots.
#include "sim/simulator.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace hopsim::sim {

EventId Simulator::schedule_at(Time at, Callback cb) {
  HOPSIM_ASSERT(at >= now_, "event scheduled in the past: at {} ps, now {} ps", at.count_ps(),
                now_.count_ps());
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const std::uint64_t seq = next_seq_++;
  slots_[slot] = Slot{seq, std::move(cb)};
  heap_.push_back(Entry{at, seq, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  return EventId{seq, slot};
}

void Simulator::cancel(EventId id) {
  // A slot is reused under a new sequence number, so a stale handle matches nothing.
  if (id.seq != 0 && id.slot < slots_.size() && slots_[id.slot].seq == id.seq) {
    slots_[id.slot] = Slot{};
    free_slots_.push_back(id.slot);
  }
}

void Simulator::run_until(Time end) {
  while (!heap_.empty() && heap_.front().at <= end) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Entry next = heap_.back();
    heap_.pop_back();
    Slot& slot = slots_[next.slot];
    if (slot.seq != next.seq) {
      continue;  // cancelled; cancel() already released the slot
    }
    Callback cb = std::move(slot.cb);
    slot = Slot{};
    free_slots_.push_back(next.slot);
    now_ = next.at;  // before the call, so that now() is right inside it
    ++events_run_;
    cb();
  }
}

}  // namespace hopsim::sim
