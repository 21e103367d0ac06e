// Matching a trace's collectives and send/recv pairs across ranks, then ordering the units.
#include "workloads/trace/replay.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

namespace hopsim::work {
namespace {

// A problem found while matching; match_trace turns it into its result.
struct Found {
  Problem problem;
};

std::string op_text(const EtNode& n) {
  return std::string(n.collective.name());
}

class Matcher {
 public:
  explicit Matcher(const ChakraJob& job) : job_(job), trace_(*job.trace) {
    unit_of_.resize(trace_.ranks.size());
    for (std::size_t r = 0; r < trace_.ranks.size(); ++r) {
      unit_of_[r].assign(trace_.ranks[r].nodes.size(), kNone);
    }
  }

  Replay run() {
    collect();
    match_collectives();
    match_pairs();
    link();
    return order();
  }

 private:
  static constexpr std::uint32_t kNone = UINT32_MAX;
  using PairKey = std::tuple<int, int, std::int64_t>;  // sender, receiver, tag

  const ChakraJob& job_;
  const EtTrace& trace_;
  std::vector<std::vector<std::uint32_t>> unit_of_;
  std::vector<ReplayUnit> units_;
  std::map<std::string, std::map<int, std::vector<std::uint32_t>>> collectives_;
  std::map<PairKey, std::vector<std::uint32_t>> sends_;
  std::map<PairKey, std::vector<std::uint32_t>> recvs_;

  const EtNode& node(NodeRef n) const {
    return trace_.ranks[static_cast<std::size_t>(n.rank)].nodes[n.index];
  }
  [[noreturn]] void fail(NodeRef n, std::string_view what) const {
    throw Found{{"/workload/trace",
                 fmt::format("{}: rank {}: node {}: {}",
                             trace_.ranks[static_cast<std::size_t>(n.rank)].file, n.rank,
                             node(n).id, what)}};
  }
  void add_unit(ReplayUnit::Kind kind, std::vector<NodeRef> members) {
    for (const NodeRef m : members) {
      unit_of_[static_cast<std::size_t>(m.rank)][m.index] =
          static_cast<std::uint32_t>(units_.size());
    }
    units_.push_back({kind, std::move(members), {}});
  }

  // Compute and metadata nodes become units; collectives and pairs wait to be matched.
  void collect() {
    const int ranks = static_cast<int>(trace_.ranks.size());
    for (int r = 0; r < ranks; ++r) {
      const auto& nodes = trace_.ranks[static_cast<std::size_t>(r)].nodes;
      for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        const EtNode& n = nodes[i];
        switch (n.type) {
          case EtNodeType::Compute:
          case EtNodeType::Metadata: add_unit(ReplayUnit::Kind::Node, {{r, i}}); break;
          case EtNodeType::Collective: collectives_[n.group][r].push_back(i); break;
          case EtNodeType::Send:
          case EtNodeType::Recv: {
            if (n.peer >= ranks || n.peer == r) {
              fail({r, i}, n.peer == r ? fmt::format("{} rank {}: itself",
                                                     n.type == EtNodeType::Send ? "sends to"
                                                                                : "receives from",
                                                     r)
                                       : fmt::format("its peer, rank {}, is not in the trace "
                                                     "({} ranks)", n.peer, ranks));
            }
            auto& queue = n.type == EtNodeType::Send ? sends_[{r, n.peer, n.tag}]
                                                     : recvs_[{n.peer, r, n.tag}];
            queue.push_back(i);
            break;
          }
        }
      }
    }
  }

  // The k-th collective of every member of a group on that group is one collective.
  void match_collectives() {
    for (const auto& [group, by_rank] : collectives_) {
      const NodeRef first{by_rank.begin()->first, by_rank.begin()->second.front()};
      const std::vector<int> members = group_ranks(job_, node(first));
      if (members.empty()) {
        fail(first, fmt::format("its pg_name \"{}\" is not in the experiment's "
                                "/workload/groups (which ranks form it?)", shown(group)));
      }
      for (const auto& [rank, nodes] : by_rank) {
        if (std::find(members.begin(), members.end(), rank) == members.end()) {
          fail({rank, nodes.front()}, fmt::format("rank {} is not a member of group \"{}\"",
                                                  rank, shown(group)));
        }
      }
      match_group(group, members, by_rank);
    }
  }

  void match_group(const std::string& group, const std::vector<int>& members,
                   const std::map<int, std::vector<std::uint32_t>>& by_rank) {
    static const std::vector<std::uint32_t> kEmpty;
    auto seq = [&](int r) -> const std::vector<std::uint32_t>& {
      const auto it = by_rank.find(r);
      return it == by_rank.end() ? kEmpty : it->second;
    };
    const std::vector<std::uint32_t>& lead = seq(members.front());
    for (const int m : members) {
      if (seq(m).size() != lead.size()) {
        const bool more = seq(m).size() > lead.size();
        const int r = more ? m : members.front();
        fail({r, seq(r)[std::min(seq(m).size(), lead.size())]},
             fmt::format("rank {} runs {} collectives on group \"{}\" and rank {} runs {}: "
                         "every member runs the same collectives in the same order",
                         m, seq(m).size(), shown(group), members.front(), lead.size()));
      }
    }
    for (std::size_t k = 0; k < lead.size(); ++k) {
      const EtNode& ref = node({members.front(), lead[k]});
      std::vector<NodeRef> unit;
      for (const int m : members) {
        const NodeRef at{m, seq(m)[k]};
        const EtNode& n = node(at);
        if (n.collective != ref.collective || n.comm_bytes != ref.comm_bytes) {
          fail(at, fmt::format("collective {} on group \"{}\" is {} of {} B here and {} of "
                               "{} B on rank {} (node {})",
                               k + 1, shown(group), op_text(n), n.comm_bytes, op_text(ref),
                               ref.comm_bytes, members.front(), ref.id));
        }
        unit.push_back(at);
      }
      add_unit(ReplayUnit::Kind::Collective, std::move(unit));
    }
  }

  // The k-th send from a to b with a tag meets the k-th recv on b from a with that tag.
  void match_pairs() {
    for (const auto& [key, sends] : sends_) {
      const auto [from, to, tag] = key;
      const auto it = recvs_.find(key);
      const std::size_t recvs = it == recvs_.end() ? 0 : it->second.size();
      if (recvs < sends.size()) {
        fail({from, sends[recvs]}, fmt::format("no COMM_RECV_NODE on rank {} receives this "
                                               "send (comm_src {}, comm_tag {})", to, from, tag));
      }
      for (std::size_t k = 0; k < sends.size(); ++k) {
        const NodeRef s{from, sends[k]};
        const NodeRef r{to, it->second[k]};
        if (node(s).comm_bytes != node(r).comm_bytes) {
          fail(r, fmt::format("receives {} B but its send (rank {}, node {}) sends {} B",
                              node(r).comm_bytes, from, node(s).id, node(s).comm_bytes));
        }
        add_unit(ReplayUnit::Kind::SendRecv, {s, r});
      }
    }
    for (const auto& [key, recvs] : recvs_) {
      const auto [from, to, tag] = key;
      const auto it = sends_.find(key);
      const std::size_t sends = it == sends_.end() ? 0 : it->second.size();
      if (sends < recvs.size()) {
        fail({to, recvs[sends]}, fmt::format("no COMM_SEND_NODE on rank {} sends to it "
                                             "(comm_dst {}, comm_tag {})", from, to, tag));
      }
    }
  }

  // Each unit waits for the units of its members' dependencies.
  void link() {
    for (std::size_t r = 0; r < trace_.ranks.size(); ++r) {
      const auto& nodes = trace_.ranks[r].nodes;
      std::unordered_map<std::uint64_t, std::uint32_t> index;
      index.reserve(nodes.size());
      for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        index.emplace(nodes[i].id, i);
      }
      for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        const std::uint32_t u = unit_of_[r][i];
        for (const std::uint64_t d : nodes[i].deps) {
          const std::uint32_t before = unit_of_[r][index.at(d)];
          if (before != u) {
            units_[u].after.push_back(before);
          }
        }
      }
    }
    for (ReplayUnit& u : units_) {
      std::sort(u.after.begin(), u.after.end());
      u.after.erase(std::unique(u.after.begin(), u.after.end()), u.after.end());
    }
  }

  // "rank 0 node 3"; "send rank 0 node 2 / recv rank 1 node 1"; "all_reduce of rank 0 node 5
  // and 7 more ranks".
  std::string describe(const ReplayUnit& u) const {
    const NodeRef m = u.members.front();
    switch (u.kind) {
      case ReplayUnit::Kind::Node: break;
      case ReplayUnit::Kind::SendRecv:
        return fmt::format("send rank {} node {} / recv rank {} node {}", m.rank, node(m).id,
                           u.members[1].rank, node(u.members[1]).id);
      case ReplayUnit::Kind::Collective:
        return fmt::format("{} of rank {} node {} and {} more ranks", op_text(node(m)), m.rank,
                           node(m).id, u.members.size() - 1);
    }
    return fmt::format("rank {} node {}", m.rank, node(m).id);
  }
  Replay order();
  [[noreturn]] void fail_cycle(const std::vector<std::uint32_t>& waiting) const;
};

// Kahn's order, ready units taken by (node index, rank) of their first member: file order,
// ranks interleaved.
Replay Matcher::order() {
  const std::size_t n = units_.size();
  std::vector<std::uint32_t> waiting(n, 0);
  std::vector<std::vector<std::uint32_t>> next(n);
  for (std::uint32_t u = 0; u < n; ++u) {
    waiting[u] = static_cast<std::uint32_t>(units_[u].after.size());
    for (const std::uint32_t b : units_[u].after) {
      next[b].push_back(u);
    }
  }
  using Key = std::tuple<std::uint32_t, int, std::uint32_t>;
  std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
  auto push = [&](std::uint32_t u) {
    ready.emplace(units_[u].members.front().index, units_[u].members.front().rank, u);
  };
  for (std::uint32_t u = 0; u < n; ++u) {
    if (waiting[u] == 0) {
      push(u);
    }
  }
  std::vector<std::uint32_t> position(n, kNone);
  Replay out;
  out.units.reserve(n);
  while (!ready.empty()) {
    const std::uint32_t u = std::get<2>(ready.top());
    ready.pop();
    position[u] = static_cast<std::uint32_t>(out.units.size());
    out.units.push_back(units_[u]);
    for (const std::uint32_t v : next[u]) {
      if (--waiting[v] == 0) {
        push(v);
      }
    }
  }
  if (out.units.size() < n) {
    fail_cycle(waiting);
  }
  for (ReplayUnit& u : out.units) {
    for (std::uint32_t& b : u.after) {
      b = position[b];
    }
  }
  return out;
}

// Some unit still waits: walk back through units that still wait until one repeats.
void Matcher::fail_cycle(const std::vector<std::uint32_t>& waiting) const {
  std::uint32_t u = 0;
  while (waiting[u] == 0) {
    ++u;
  }
  std::vector<std::uint32_t> path;
  std::vector<std::uint32_t> seen_at(units_.size(), kNone);
  while (seen_at[u] == kNone) {
    seen_at[u] = static_cast<std::uint32_t>(path.size());
    path.push_back(u);
    const auto& after = units_[u].after;
    u = *std::find_if(after.begin(), after.end(), [&](std::uint32_t b) { return waiting[b] > 0; });
  }
  std::vector<std::string> steps;
  for (std::size_t i = path.size(); i-- > seen_at[u];) {
    steps.push_back(describe(units_[path[i]]));
  }
  constexpr std::size_t kShown = 6;
  const std::size_t all = steps.size();
  if (all > kShown) {
    steps.resize(kShown);
    steps.push_back(fmt::format("... ({} in all)", all));
  }
  fail(units_[u].members.front(),
       fmt::format("waits for itself: {} -> (again) (a dependency cycle, across ranks through "
                   "collectives and send/recv pairs)",
                   fmt::join(steps, " -> ")));
}

}  // namespace

std::vector<int> group_ranks(const ChakraJob& job, const EtNode& node) {
  if (node.group.empty() && !job.groups.contains("")) {
    std::vector<int> all(job.trace->ranks.size());
    for (std::size_t r = 0; r < all.size(); ++r) {
      all[r] = static_cast<int>(r);
    }
    return all;
  }
  const auto it = job.groups.find(node.group);
  return it == job.groups.end() ? std::vector<int>{} : it->second;
}

std::variant<Replay, Problem> match_trace(const ChakraJob& job) {
  try {
    return Matcher(job).run();
  } catch (const Found& f) {
    return f.problem;
  }
}

}  // namespace hopsim::work
