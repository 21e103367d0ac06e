// Compute kernels slowed while an exchange beside them holds SMs.
#include "workloads/plan/sm_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "sim/assert.hpp"

namespace hopsim::work {

namespace {

using Window = std::pair<std::int64_t, std::int64_t>;  // [begin, end) in picoseconds

// `spans` sorted, overlapping ones merged.
void merge_windows(std::vector<Window>& spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<Window> merged;
  for (const Window& span : spans) {
    if (!merged.empty() && span.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, span.second);
    } else {
      merged.push_back(span);
    }
  }
  spans = std::move(merged);
}

// Per GPU, the merged times its exchanges' kernels run, in order. An exchange is a run of
// consecutive plan tasks that hold SMs in one phase (an exchange's builder adds its tasks
// together). On each GPU its kernel runs from the first of the GPU's own tasks (a send, a fixed
// cost; a GPU that only receives: its first arrival) to the end of the last task that sends or
// brings it bytes: waiting for a late peer's bytes, it holds its SMs all the same.
std::vector<std::vector<Window>> exchange_times(const Plan& plan, const Outcome& run) {
  std::size_t gpus = 0;
  for (const PlanTask& t : plan.tasks()) {
    gpus = std::max({gpus, t.src.index() + 1, t.dst.index() + 1});
  }
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  std::vector<std::vector<Window>> busy(gpus);
  std::vector<std::int64_t> own(gpus, kNone);      // its first own task's start
  std::vector<std::int64_t> arrives(gpus, kNone);  // its first arrival's start
  std::vector<std::int64_t> last(gpus, 0);         // its last task's end
  std::vector<std::size_t> touched;
  std::uint32_t phase = 0;
  const auto close = [&] {
    for (const std::size_t g : touched) {
      const std::int64_t begin = own[g] != kNone ? own[g] : arrives[g];
      if (last[g] > begin) {
        busy[g].emplace_back(begin, last[g]);
      }
      own[g] = kNone;
      arrives[g] = kNone;
      last[g] = 0;
    }
    touched.clear();
  };
  const auto touch = [&](std::size_t g, std::int64_t begin, std::int64_t end, bool sends) {
    if (own[g] == kNone && arrives[g] == kNone) {
      touched.push_back(g);
    }
    std::int64_t& first = sends ? own[g] : arrives[g];
    first = std::min(first, begin);
    last[g] = std::max(last[g], end);
  };
  for (std::size_t i = 0; i < plan.tasks().size(); ++i) {
    const PlanTask& t = plan.tasks()[i];
    const sim::TaskTimes& when = run.times[i];
    if (!holds_sms(plan, t) || when.end == Time::max()) {
      close();
      continue;
    }
    if (t.phase != phase) {
      close();
      phase = t.phase;
    }
    touch(t.src.index(), when.start.count_ps(), when.end.count_ps(), true);
    if (t.kind == PlanTaskKind::Flow) {
      touch(t.dst.index(), when.start.count_ps(), when.end.count_ps(), false);
    }
  }
  close();
  for (std::vector<Window>& list : busy) {
    merge_windows(list);
  }
  return busy;
}

// How long `work` picoseconds of full-speed compute take from `start`, at `speed` inside the
// intervals of `busy` and 1 outside.
double stretched(const std::vector<Window>& busy, std::int64_t start, double work,
                 double speed) {
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  auto it = std::upper_bound(busy.begin(), busy.end(), Window{start, kNever});
  if (it != busy.begin() && std::prev(it)->second > start) {
    --it;
  }
  double at = static_cast<double>(start);
  double left = work;
  for (; it != busy.end() && left > 0; ++it) {
    const auto begin = static_cast<double>(std::max(it->first, start));
    const auto end = static_cast<double>(it->second);
    const double free = begin - at;  // at full speed before this interval
    if (left <= free) {
      return at + left - static_cast<double>(start);
    }
    left -= free;
    at = begin;
    const double inside = (end - begin) * speed;
    if (left <= inside) {
      return at + left / speed - static_cast<double>(start);
    }
    left -= inside;
    at = end;
  }
  return at + left - static_cast<double>(start);
}

}  // namespace

bool holds_sms(const Plan& plan, const PlanTask& t) {
  const PhaseKind kind = plan.phases()[t.phase].kind;
  if (kind != PhaseKind::Dispatch && kind != PhaseKind::Combine) {
    return false;
  }
  if (t.kind == PlanTaskKind::Flow) {
    return t.src != t.dst;
  }
  return t.kind == PlanTaskKind::Delay || t.kind == PlanTaskKind::Hold;
}

std::vector<Time> sm_held_times(const Plan& plan, const Outcome& run) {
  const std::vector<std::vector<Window>> busy = exchange_times(plan, run);
  std::vector<Time> out(busy.size());
  for (std::size_t g = 0; g < busy.size(); ++g) {
    for (const auto& [begin, end] : busy[g]) {
      out[g] += Time::ps(end - begin);
    }
  }
  return out;
}

std::vector<Time> tax_beside_exchanges(Plan& plan, const Outcome& untaxed,
                                       const ComputeSpeeds* speeds) {
  const SmShare share = plan.sm_share();
  if (share.held <= 0) {
    return {};
  }
  HOPSIM_ASSERT(untaxed.times.size() == plan.tasks().size(), "a run of {} tasks for {}",
                untaxed.times.size(), plan.tasks().size());
  const double speed =
      static_cast<double>(share.sms - share.held) / static_cast<double>(share.sms);
  const std::vector<std::vector<Window>> busy = exchange_times(plan, untaxed);
  std::vector<Time> taxed(plan.tasks().size());
  std::vector<Time> added(busy.size());
  for (std::size_t i = 0; i < plan.tasks().size(); ++i) {
    const PlanTask& t = plan.tasks()[i];
    const sim::TaskTimes& when = untaxed.times[i];
    if (t.kind != PlanTaskKind::Compute || when.end == Time::max() ||
        t.src.index() >= busy.size() || busy[t.src.index()].empty()) {
      continue;
    }
    const Time ran = time_on_gpu(speeds, t, i);
    if (ran <= Time{}) {
      continue;
    }
    const double took = stretched(busy[t.src.index()], when.start.count_ps(),
                                  static_cast<double>(ran.count_ps()), speed);
    const double factor = took / static_cast<double>(ran.count_ps());
    if (factor > 1.0) {  // the plan's duration by the same factor, so its GPU's speed still applies
      const double scaled = std::ceil(static_cast<double>(t.duration.count_ps()) * factor);
      taxed[i] = Time::ps(static_cast<std::int64_t>(scaled));
      added[t.src.index()] += taxed[i] - t.duration;
    }
  }
  plan.set_durations(taxed);
  return added;
}

Outcome simulate_sharing_sms(const topo::Cluster& cluster, Plan& plan,
                             const SimulateOptions& options) {
  if (plan.sm_share().held <= 0) {
    return simulate(cluster, plan, options);
  }
  SimulateOptions first = options;
  first.observer = nullptr;
  const Outcome untaxed = simulate(cluster, plan, first);
  if (!untaxed.stuck.empty()) {
    return untaxed;
  }
  std::vector<Time> added = tax_beside_exchanges(plan, untaxed, options.speeds);
  Outcome out = simulate(cluster, plan, options);
  out.sm_tax = std::move(added);
  out.events += untaxed.events;
  out.solves += untaxed.solves;
  out.classes_solved += untaxed.classes_solved;
  out.wall_s += untaxed.wall_s;
  return out;
}

}  // namespace hopsim::work
