// Reads the EP libraries' data files (ep_library_config.hpp).
#include "tools/config/ep_library_config.hpp"

#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/config/json_file.hpp"
#include "tools/config/keys/ep_library_keys.hpp"
#include "tools/config/presets.hpp"
#include "workloads/collectives/ep_algorithms.hpp"

namespace hopsim::config {
namespace {

namespace lk = keys::ep_library;
namespace ck = keys::ep_library_cost;

Time microseconds(double us) {
  return Time::from_seconds(us * 1e-6);
}

// {"floor_us", "nvlink_GBps"} and, across nodes, "nic_GBps" and "nic_pair_GBps"; optionally
// what its SMs move, "sm_GBps" and "sm_pair_us".
work::PathCost parse_cost(const Node& n, bool internode) {
  n.expect_object();
  n.allow_only(internode ? ck::kInternodeSection : ck::kIntranodeSection);
  work::PathCost cost;
  cost.floor = microseconds(n.read(ck::kFloorUs));
  cost.nvlink = Bandwidth::gigabytes_per_s(n.read(ck::kNvlinkGBps));
  if (internode) {
    cost.nic = Bandwidth::gigabytes_per_s(n.read(ck::kNicGBps));
    cost.nic_pair = Bandwidth::gigabytes_per_s(n.read(ck::kNicPairGBps));
  }
  if (const std::optional<double> sm = n.read_if(ck::kSmGBps)) {
    cost.sm_rate = Bandwidth::gigabytes_per_s(*sm);
    cost.sm_pair = microseconds(n.read(ck::kSmPairUs));
  } else if (n.has(ck::kSmPairUs)) {
    n.at(ck::kSmPairUs).fail("sm_pair_us needs sm_GBps beside it (what the SMs move)");
  }
  return cost;
}

// {"dispatch": cost, "combine": cost}, in work::ExchangeOp's order.
std::array<work::PathCost, 2> parse_path(const Node& n, bool internode) {
  namespace pk = keys::ep_library_path;
  n.expect_object();
  n.allow_only(pk::kSection);
  return {parse_cost(n.at(pk::kDispatch), internode), parse_cost(n.at(pk::kCombine), internode)};
}

work::LibraryRates parse_gpu(const Node& n) {
  namespace gk = keys::ep_library_gpu;
  n.expect_object();
  n.allow_only(gk::kSection);
  work::LibraryRates rates{parse_path(n.at(gk::kIntranode), false),
                           parse_path(n.at(gk::kInternode), true), n.read_if(gk::kSms).value_or(0)};
  bool sm_bound = false;
  for (const auto* path : {&rates.intranode, &rates.internode}) {
    for (const work::PathCost& cost : *path) {
      sm_bound = sm_bound || cost.sm_rate.bytes_per_s > 0;
    }
  }
  if (sm_bound && rates.sms == 0) {
    n.fail("sms is required where an op gives sm_GBps: the SMs its kernels hold by default");
  }
  return rates;
}

// A GPU's entry as parse_gpu reads it: its own, or with "same_as", the named GPU's entry with
// this one's other keys laid over it (a JSON merge patch: an op's keys one by one), kept in
// `merged`, its errors naming this entry's path.
Node gpu_entry(const Node& gpus, const std::string& model, nlohmann::json& merged) {
  namespace gk = keys::ep_library_gpu;
  const Node n = gpus.at(model);
  n.expect_object();
  if (!n.has(gk::kSameAs)) {
    return n;
  }
  const std::string base = n.read(gk::kSameAs);
  if (base == model || !gpus.has(base)) {
    std::vector<std::string> others;
    for (const auto& [name, value] : gpus.json().items()) {
      if (name != model) {
        others.push_back(fmt::format("\"{}\"", name));
      }
    }
    const std::string listed = others.empty() ? "none" : fmt::format("{}", fmt::join(others, ", "));
    n.at(gk::kSameAs).fail(
        fmt::format("\"{}\" is not another GPU of this file (its others: {})", base, listed));
  }
  const Node from = gpus.at(base);
  from.expect_object();
  if (from.has(gk::kSameAs)) {
    n.at(gk::kSameAs).fail(fmt::format(
        "\"{}\" takes another GPU's costs itself: same_as must name a GPU with its own", base));
  }
  merged = from.json();
  nlohmann::json own = n.json();
  own.erase(std::string(gk::kSameAs.name));
  merged.merge_patch(own);
  return Node(merged, n.origin(), n.path());
}

}  // namespace

work::LibraryFile parse_ep_library(const Node& root, const std::string& name,
                                   const std::string& gpu) {
  root.expect_object();
  root.allow_only(lk::kSection);
  (void)root.read(lk::kLibrary);
  (void)root.read_if(lk::kDescription);
  const Node gpus = root.at(lk::kGpus);
  gpus.expect_object();
  work::LibraryFile out{name, std::nullopt, {}};
  std::vector<std::string> names;
  for (const auto& [model, value] : gpus.json().items()) {
    nlohmann::json merged;
    const work::LibraryRates rates = parse_gpu(gpu_entry(gpus, model, merged));
    names.push_back(fmt::format("\"{}\"", model));
    if (model == gpu) {
      out.rates = rates;
    }
  }
  if (root.has(lk::kSources)) {
    check_sources(root);
  }
  if (!out.rates) {
    out.missing = fmt::format("{} has no costs for the cluster's GPU \"{}\" (its /gpus: {})",
                              root.file(), gpu, names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")));
  }
  return out;
}

work::LibraryFiles read_ep_libraries(const std::string& gpu) {
  work::LibraryFiles out;
  for (const work::EpAlgorithmRow& row : work::kEpAlgorithms) {
    if (row.data_file.empty() || out.find(row.data_file) != nullptr) {
      continue;  // none, or a file another row shares (megatron_alltoall: NCCL's all-to-all)
    }
    const std::string name(row.data_file);
    const std::string relative = fmt::format("ep_libraries/{}.json", name);
    std::filesystem::path found;
    for (const std::filesystem::path& root : preset_roots()) {
      std::error_code ec;
      if (std::filesystem::is_regular_file(root / relative, ec)) {
        found = root / relative;
        break;
      }
    }
    if (found.empty()) {
      out.files.push_back({name, std::nullopt,
                           fmt::format("no {} among the presets (configs/ or $HOPSIM_PRESETS)",
                                       relative)});
      continue;
    }
    // A file that does not parse or lacks a key stops only the runs that choose its row:
    // missing_constants() reports the reason then, naming the file and the JSON path.
    const std::string file = display_path(found);
    try {
      const nlohmann::json doc = read_json_file(file);
      out.files.push_back(parse_ep_library(Node(doc, file), name, gpu));
    } catch (const ConfigError& e) {
      out.files.push_back({name, std::nullopt, e.what()});
    }
  }
  return out;
}

}  // namespace hopsim::config
