// The profile check (profile_check.hpp): kernels to rows, rows beside hopsim's times.
#include "tools/profile/profile_check.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/config/node.hpp"
#include "workloads/compute/kernel_class.hpp"

namespace hopsim::profile {
namespace {

// Classes that one rule names together end in one group (a union-find over class names).
class Groups {
 public:
  std::string root(const std::string& c) {
    auto it = parent_.find(c);
    if (it == parent_.end() || it->second == c) {
      return c;
    }
    return it->second = root(it->second);
  }
  void join(const std::string& a, const std::string& b) {
    const std::string ra = root(a);
    const std::string rb = root(b);
    if (ra != rb) {
      parent_[rb] = ra;
      parent_.try_emplace(ra, ra);
    }
  }

 private:
  std::map<std::string, std::string> parent_;
};

// Every class a row may hold, in the order rows are listed.
std::vector<std::string> row_order() {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < work::kKernelClasses; ++k) {
    out.emplace_back(work::kernel_class_name(static_cast<work::KernelClass>(k)));
  }
  for (std::string_view c : {kNccl, kDeepEp, kUnmodelled}) {
    out.emplace_back(c);
  }
  return out;
}

// hopsim's time for `name` on its busiest GPU: its share of compute, of compute_s.
std::optional<double> hopsim_time(const std::string& name, const work::Summary& s) {
  for (std::size_t k = 0; k < work::kKernelClasses; ++k) {
    const auto kind = static_cast<work::KernelClass>(k);
    if (work::kernel_class_name(kind) == name) {
      const Time total = s.compute_kernels.total();
      const double share =
          total > Time{} ? s.compute_kernels.time(kind).seconds() / total.seconds() : 0.0;
      return share * s.ranks[s.critical_rank.index()].compute.seconds();
    }
  }
  return std::nullopt;
}

std::vector<const KernelEvent*> selected(const KinetoTrace& trace, const CheckOptions& o) {
  std::vector<const KernelEvent*> out;
  for (const KernelEvent& k : trace.kernels) {
    if (!o.device || k.device == *o.device) {
      out.push_back(&k);
    }
  }
  if (out.empty()) {
    std::set<std::int64_t> devices;
    for (const KernelEvent& k : trace.kernels) {
      devices.insert(k.device);
    }
    throw config::ConfigError(fmt::format("--device {}: the trace has no kernels on that GPU; "
                                          "it has kernels on {}",
                                          *o.device, fmt::join(devices, ", ")));
  }
  return out;
}

// Devices, streams and the mean span of the selected kernels.
void extent(const std::vector<const KernelEvent*>& kernels, ProfileCheck& out) {
  std::map<std::int64_t, std::pair<double, double>> span;  // device: first start, last end
  std::set<std::pair<std::int64_t, std::int64_t>> streams;
  for (const KernelEvent* k : kernels) {
    auto [it, fresh] = span.try_emplace(k->device, k->start_us, k->start_us + k->duration_us);
    it->second.first = std::min(it->second.first, k->start_us);
    it->second.second = std::max(it->second.second, k->start_us + k->duration_us);
    streams.emplace(k->device, k->stream);
  }
  double sum = 0;
  for (const auto& [device, s] : span) {
    sum += s.second - s.first;
  }
  out.devices = static_cast<std::int64_t>(span.size());
  out.streams = static_cast<std::int64_t>(streams.size());
  out.trace_span_s = sum * 1e-6 / static_cast<double>(out.devices * out.steps);
}

// The rows: a group per set of classes that matched rules name together, and each class with
// trace kernels or hopsim time on its own.
std::vector<ClassRow> make_rows(Groups& groups, const std::map<std::string, ClassRow>& by_root,
                                const work::Summary& s) {
  std::vector<ClassRow> rows;
  std::set<std::string> done;
  const std::vector<std::string> order = row_order();
  for (const std::string& c : order) {
    const std::string root = groups.root(c);
    if (!done.insert(root).second) {
      continue;
    }
    ClassRow row;
    if (const auto it = by_root.find(root); it != by_root.end()) {
      row = it->second;
    }
    row.classes.clear();
    for (const std::string& member : order) {
      if (groups.root(member) == root) {
        row.classes.push_back(member);
        if (const std::optional<double> t = hopsim_time(member, s)) {
          row.hopsim_s = row.hopsim_s.value_or(0) + *t;
        }
      }
    }
    if (row.kernels > 0 || row.hopsim_s.value_or(0) > 0) {
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace

double ProfileCheck::trace_compute_s() const {
  double sum = 0;
  for (const ClassRow& r : rows) {
    sum += r.hopsim_s ? r.trace_s : 0.0;
  }
  return sum;
}

double ProfileCheck::trace_comm_s() const {
  double sum = 0;
  for (const ClassRow& r : rows) {
    sum += communication_class(r.classes.front()) ? r.trace_s : 0.0;
  }
  return sum;
}

ProfileCheck check_profile(const KinetoTrace& trace, const KernelRules& rules,
                           const work::CaseResult& result, const CheckOptions& options) {
  ProfileCheck out;
  out.steps = options.steps > 0 ? options.steps : std::max<std::int64_t>(1, trace.profiler_steps);
  const std::vector<const KernelEvent*> kernels = selected(trace, options);
  extent(kernels, out);
  const double per = 1.0 / static_cast<double>(out.devices * out.steps);
  std::vector<std::size_t> rule_of(kernels.size());
  Groups groups;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    rule_of[i] = rules.match(kernels[i]->name);
    if (rule_of[i] < rules.size()) {
      const std::vector<std::string>& cs = rules.rule(rule_of[i]).classes;
      for (const std::string& c : cs) {
        groups.join(cs.front(), c);
      }
    }
  }
  std::map<std::string, ClassRow> by_root;
  std::map<std::string, Unmatched> unmatched;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const double time = kernels[i]->duration_us * 1e-6 * per;
    ClassRow& row = rule_of[i] < rules.size()
                        ? by_root[groups.root(rules.rule(rule_of[i]).classes.front())]
                        : out.unclassified;
    row.kernels += per;
    row.trace_s += time;
    if (rule_of[i] == rules.size()) {
      Unmatched& u = unmatched[kernels[i]->name];
      u.name = kernels[i]->name;
      u.kernels += per;
      u.trace_s += time;
    }
  }
  out.unclassified.classes = {std::string(kUnclassified)};
  const work::Summary& s = result.summary;
  out.rows = make_rows(groups, by_root, s);
  for (auto& [name, u] : unmatched) {
    out.unmatched.push_back(std::move(u));
  }
  std::stable_sort(out.unmatched.begin(), out.unmatched.end(),
                   [](const Unmatched& a, const Unmatched& b) { return a.trace_s > b.trace_s; });
  const work::RankTime& busiest = s.ranks[s.critical_rank.index()];
  out.hopsim_step_s = s.step.seconds();
  out.hopsim_compute_s = busiest.compute.seconds();
  out.hopsim_comm_s = busiest.comm.seconds();
  return out;
}

}  // namespace hopsim::profile
