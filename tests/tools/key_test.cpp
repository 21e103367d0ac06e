// Tests of the declared config keys (tools/config/key.hpp): the reference text made from a
// validator, every declaration's completeness, choice lists against the model's own names, and
// one table-driven test that every numeric key's parser enforces exactly its declared bounds.
#include "tools/config/key.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/config/calibration_config.hpp"
#include "tools/config/ep_library_config.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/keys/calibration_keys.hpp"
#include "tools/config/keys/calibration_table_keys.hpp"
#include "tools/config/keys/chakra_keys.hpp"
#include "tools/config/keys/ep_library_keys.hpp"
#include "tools/config/keys/cluster_keys.hpp"
#include "tools/config/keys/collective_keys.hpp"
#include "tools/config/keys/experiment_keys.hpp"
#include "tools/config/keys/flows_keys.hpp"
#include "tools/config/keys/model_keys.hpp"
#include "tools/config/keys/nccl_keys.hpp"
#include "tools/config/keys/perturbation_keys.hpp"
#include "tools/config/keys/step_keys.hpp"
#include "tools/config/schema.hpp"
#include "workloads/collectives/nccl_model.hpp"
#include "workloads/compute/attention_kernel.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/compute/kernel_class.hpp"
#include "workloads/costs/layer_kernels.hpp"
#include "workloads/cp/cp_layout.hpp"
#include "workloads/ep/routing_spec.hpp"
#include "workloads/mesh/mesh.hpp"
#include "workloads/step/schedule_table.hpp"
#include "workloads/step/step_model.hpp"

namespace hopsim::config {
namespace {

using nlohmann::json;

TEST_CASE("a bound is written as the reference writes it") {
  CHECK(integer_bound(1024) == "1024");
  CHECK(integer_bound(std::int64_t{1} << 14) == "2^14");
  CHECK(integer_bound(std::int64_t{1} << 31) == "2^31");
  CHECK(integer_bound(100'000) == "100000");
  CHECK(integer_bound(1'000'000) == "10^6");
  CHECK(integer_bound(INT64_MAX) == "2^63");
  CHECK(number_bound(1e12) == "1e12");
  CHECK(number_bound(1e6) == "1e6");
  CHECK(number_bound(1e-6) == "1e-6");
  CHECK(number_bound(0.001) == "0.001");
  CHECK(number_bound(10000) == "10000");
  CHECK(number_bound(14.2) == "14.2");
  CHECK(quoted_choices(keys::attention::kPassNames) == R"("forward", "backward" or "both")");
}

TEST_CASE("a declaration's type text and default come from its validator and value") {
  const auto type = [](KeyRef k) { return type_text(k); };
  CHECK(type(&keys::step::kGlobalBatch) == "integer in [1, 2^31]");
  CHECK(type(&keys::experiment::kSeed) == "integer in [0, 2^63)");
  CHECK(type(&keys::size_range::kMax) == "integer in [min, 2^61) (bytes)");
  CHECK(type(&keys::step::kStageLayers) == "array of integers in [1, 100000], one per model stage");
  CHECK(type(&keys::gpu::kContextGB) == "number in [0, hbm_GB] (10^9 bytes)");
  CHECK(type(&keys::link::kLatencyUs) == "number in [0, 1e6] (microseconds)");
  CHECK(type(&keys::validation::kPublished) == "number in (0, 1e12]");
  CHECK(type(&keys::step::kSchedule) ==
        R"("1f1b", "interleaved", "zb-h1", "dualpipe", "dualpipev", "interleaved_ep_overlap", )"
        R"("1f1b_ep_overlap" or "auto")");
  CHECK(type(&keys::parallel::kOrder) == R"(array of "tp", "cp", "pp" or "dp", each once)");
  CHECK(default_text(&keys::step::kSchedule) == R"("1f1b")");
  CHECK(default_text(&keys::step::kStepOverheadMs) == "14.2");
  CHECK(default_text(&keys::solver::kTolerance) == "0 (exact)");
  CHECK(default_text(&keys::step::kGlobalBatch) == "required");
  // A collective's algorithms are documented from their table, per op.
  CHECK(doc_text(&keys::collective::kAlgorithm) == work::algorithms_by_op());
}

TEST_CASE("every declared key has a doc and a default, one name per section, its unit's suffix") {
  for (const Section* s : schema()) {
    CAPTURE(s->path);
    std::set<std::string_view> names;
    for (const KeyRef& k : s->keys) {
      const std::string_view name = key_name(k);
      CAPTURE(name);
      CHECK(names.insert(name).second);
      CHECK_FALSE(doc_text(k).empty());
      CHECK_FALSE(default_text(k).empty());
      CHECK_FALSE(type_text(k).empty());
      if (unit_of_name(name) != Unit::None) {
        CHECK(unit_of(k) == unit_of_name(name));
      }
      if (const auto* const* choice = std::get_if<const ChoiceKey*>(&k);
          choice != nullptr && (*choice)->value) {
        CHECK(std::ranges::find((*choice)->names(), *(*choice)->value) != (*choice)->names().end());
      }
    }
  }
}

// names[i] is the model's name of enum value i.
template <class E, std::size_t N, class Name>
void check_names(const std::array<std::string_view, N>& names, Name name_of) {
  for (std::size_t i = 0; i < N; ++i) {
    CAPTURE(names[i]);
    CHECK(names[i] == name_of(static_cast<E>(i)));
  }
}

TEST_CASE("a choice key names each value as the model does, in its enum's order") {
  check_names<work::Dim>(keys::parallel::kDimNames, work::dim_name);
  check_names<work::Dim>(keys::collective::kGroupNames, work::dim_name);
  check_names<work::RoutingDistribution>(keys::popularity::kDistributionNames,
                                         work::distribution_name);
  check_names<work::Passes>(keys::attention::kPassNames, work::passes_name);
  check_names<work::LayerMode>(keys::attention::kModeNames, work::mode_name);
  check_names<work::AttentionMask>(keys::attention::kMaskNames, work::attention_mask_name);
  check_names<work::Dtype>(keys::attention::kDtypeNames, work::dtype_name);
  check_names<work::CpAlgorithm>(keys::attention_cp::kAlgorithmNames, work::cp_algorithm_name);
  check_names<work::CpBalance>(keys::attention_cp::kBalanceNames, work::balance_name);
  check_names<work::EpAlgorithm>(keys::moe_layer::kAlgorithmNames, work::ep_algorithm_name);
  check_names<work::EpOverlap>(keys::moe_layer::kOverlapNames, work::ep_overlap_name);
  check_names<work::Balancer>(keys::routing::kBalancerNames, work::balancer_name);
  check_names<work::Recompute>(keys::step::kRecomputeNames, work::recompute_name);
  check_names<work::Dtype>(keys::table::kDtypeNames, work::dtype_name);
  check_names<work::Pass>(keys::table::kPassNames, [](work::Pass p) { return work::pass_name(p); });
  for (std::size_t p = 0; p < work::kProtocols.size(); ++p) {
    CHECK(keys::nccl::kProtocolNames[p] == work::protocol_name(work::kProtocols[p]));
    CHECK(keys::collective::kProtocolNames[p] == work::protocol_name(work::kProtocols[p]));
    CHECK(key_name(keys::nccl_algorithm::kByProtocol[p]) ==
          work::protocol_name(work::kProtocols[p]));
  }
  // The schedule key's choices are the schedule table's rows, then "auto".
  const auto schedules = keys::step::kSchedule.names();
  REQUIRE(schedules.size() == work::pipe_schedules().size() + 1);
  for (std::size_t s = 0; s < work::pipe_schedules().size(); ++s) {
    CHECK(schedules[s] == work::pipe_schedules()[s]->name);
  }
  CHECK(schedules.back() == "auto");
  // Keys whose parser maps a name to the model's value by name: each choice is one.
  for (const std::string_view name : keys::attention::kFp8RecipeNames) {
    CHECK(work::fp8_recipe_named(name).has_value());
  }
  for (const std::string_view name : keys::attention::kAttentionKernelNames) {
    CHECK(work::attention_kernel_named(name).has_value());
  }
  for (const std::string_view name : keys::step::kCrossEntropyNames) {
    CHECK(work::cross_entropy_kernel_named(name).has_value());
  }
}

// ---- Every numeric key's bounds, through its parser -------------------------------------------

// Where a section sits: an experiment file and the dotted path of the section in it (a
// "cluster." or "model." path goes into that file), or a calibration file and a JSON pointer;
// `base` are --set arguments applied first, `with` more of them for single keys that take
// effect only beside another.
struct Probe {
  const Section* section;
  std::string file;
  std::string path;
  std::vector<std::string> base = {};
  std::map<std::string_view, std::vector<std::string>> with = {};
  bool calibration = false;
  bool ep_library = false;  ///< an EP library's data file and a JSON pointer (parse_ep_library)
};

std::string source(const std::string& file) {
  return std::string(HOPSIM_SOURCE_DIR) + "/" + file;
}

const std::string kStep = "configs/experiments/llama3-8b-step-32gpu.json";
const std::string kMoe = "configs/experiments/deepseek-v3-moe-ep64.json";
const std::string kAttention = "configs/experiments/llama3-70b-cp.json";
const std::string kCollective = "configs/experiments/nccl-allgather-h100.json";
const std::string kRoutedCollective = "configs/experiments/moe-two-tier-h800.json";
const std::string kCalibration = "configs/calibration/h100-published.json";
const std::string kEpLibrary = "configs/ep_libraries/pplx_kernels.json";

std::vector<Probe> probes() {
  using namespace keys;
  const std::string nccl_latency = R"({"base_latency_us": 1, "nvlink_hop_latency_us": 1,
                                       "net_hop_latency_us": 1})";
  const std::string ring =
      fmt::format(R"({{"simple": {0}, "ll": {0}, "ll128": {0}}})", nccl_latency);
  return {
      {&experiment::kSection, kCollective, ""},
      {&parallel::kSection, kStep, "parallel"},
      {&validation::kSection, "configs/validation/deepep-normal-ep16-combine.json", "validation"},
      {&solver::kSection, kCollective, "solver"},
      {&perturbation::kSection,
       kMoe,
       "perturbations.0",
       {R"(perturbations=[{"gpus": [0], "compute_speed": 0.5}])"},
       {{"stragglers", {"perturbations.0.gpus=null", "perturbations.0.compute_speed=[0.5, 1]"}},
        {"kernel_speed", {"perturbations.0.compute_speed=null"}},
        {"bandwidth", {R"(perturbations.0.links="nic")", "perturbations.0.compute_speed=null"}},
        {"extra_latency_us",
         {R"(perturbations.0.links="nic")", "perturbations.0.compute_speed=null"}}}},
      {&flow::kSection, "configs/experiments/flows-tour.json", "workload.flows.0"},
      {&collective::kSection, kCollective, "workload"},
      {&size_range::kSection,
       kCollective,
       "workload.bytes",
       {R"(workload.bytes={"min": 1024, "max": 4096, "factor": 2})"}},
      {&collective_moe::kSection,
       kRoutedCollective,
       "workload.moe",
       {},
       {{"zipf_s", {R"(workload.moe.distribution="zipf")"}},
        {"alpha", {R"(workload.moe.distribution="dirichlet")"}},
        {"run_tokens", {R"(workload.moe.distribution="training")"}}}},
      {&attention::kSection,
       kAttention,
       "workload",
       {},
       {{"request_overhead_ms", {R"(workload.mode="prefill")"}},
        {"documents", {R"(workload.mask="document")"}}}},
      {&attention_cp::kSection, kAttention, "workload.cp"},
      {&moe_layer::kSection, kMoe, "workload"},
      {&routing::kSection,
       kMoe,
       "workload.routing",
       {},
       {{"zipf_s", {R"(workload.routing.distribution="zipf")"}},
        {"alpha", {R"(workload.routing.distribution="dirichlet")"}},
        {"run_tokens", {R"(workload.routing.distribution="training")"}},
        {"steps", {R"(workload.routing.balancer="bias")"}},
        {"bias_update", {R"(workload.routing.balancer="bias")"}},
        {"aux_loss_weight", {R"(workload.routing.balancer="aux_loss")"}}}},
      {&transformer::kSection, "configs/experiments/default.json", "workload"},
      {&transformer_moe::kSection, "configs/experiments/default.json", "workload.moe"},
      {&step::kSection,
       kStep,
       "workload",
       {},
       {{"recompute_num_layers", {R"(workload.recompute="full")"}}}},
      {&chakra::kSection, "configs/experiments/chakra-moe-layer.json", "workload"},
      {&cluster::kSection, kCollective, "cluster"},
      {&gpu::kSection, kCollective, "cluster.gpu"},
      {&link::kSection, kCollective, "cluster.nic"},
      {&fabric::kSection, kCollective, "cluster.fabric"},
      {&nccl::kSection, kCollective, "cluster.nccl"},
      {&nccl_latency::kSection,
       kCollective,
       "cluster.nccl.ring.simple",
       {"cluster.nccl.ring=" + ring}},
      {&nvls::kSection,
       kCollective,
       "cluster.nccl.nvls",
       {R"(cluster.nccl.nvls={"nvlink_latency_us": 1, "net_latency_us": 1, "efficiency": 0.5})"}},
      {&deepep::kSection,
       kCollective,
       "cluster.deepep",
       {R"(cluster.deepep={"nvlink_efficiency": 0.5, "intranode_GBps_per_sm": 10, )"
        R"("intranode_link_share": 0.9, "layout_us": 45, "notify_us": 136})"}},
      {&model::kSection, kAttention, "model"},
      {&mla::kSection, kMoe, "model.mla"},
      {&model_moe::kSection, kMoe, "model.moe"},
      {&device::kSection, kCalibration, "/device", {}, {}, true},
      {&ceilings::kSection, kCalibration, "/device/ceilings", {}, {}, true},
      {&axis::kSection, kCalibration, "/tables/0/axes/0", {}, {}, true},
      // EP library files: `base` sets "pointer=value" first (an op's SM keys need its GPU's
      // sms and their sm_GBps beside them).
      {&ep_library_cost::kIntranodeSection, kEpLibrary, "/gpus/H100 SXM/intranode/dispatch",
       {"/gpus/H100 SXM/sms=8", "/gpus/H100 SXM/intranode/dispatch/sm_GBps=10"}, {}, false,
       true},
      {&ep_library_cost::kInternodeSection, kEpLibrary, "/gpus/H100 SXM/internode/combine",
       {"/gpus/H100 SXM/sms=8", "/gpus/H100 SXM/internode/combine/sm_GBps=10"}, {}, false, true},
      {&ep_library_gpu::kSection, kEpLibrary, "/gpus/H100 SXM", {}, {}, false, true},
      // The relaying libraries' files: HybridEP's (H100, its SM bound) and UCCL-EP's (H200).
      {&ep_library_cost::kInternodeSection, "configs/ep_libraries/hybrid_ep.json",
       "/gpus/H100 SXM/internode/dispatch", {}, {}, false, true},
      {&ep_library_gpu::kSection, "configs/ep_libraries/hybrid_ep.json", "/gpus/H100 SXM", {}, {},
       false, true},
      {&ep_library_cost::kIntranodeSection, "configs/ep_libraries/uccl_ep.json",
       "/gpus/H200 SXM/intranode/combine",
       {"/gpus/H200 SXM/sms=8", "/gpus/H200 SXM/intranode/combine/sm_GBps=10"}, {}, false, true},
      {&ep_library_cost::kInternodeSection, "configs/ep_libraries/uccl_ep.json",
       "/gpus/H200 SXM/internode/combine",
       {"/gpus/H200 SXM/sms=8", "/gpus/H200 SXM/internode/combine/sm_GBps=10"}, {}, false, true},
  };
}

// The probes of the calibration table keys: the first table of each op.
void add_table_key_probes(std::vector<Probe>& out) {
  std::ifstream in(source(kCalibration));
  const json doc = json::parse(in);
  const std::map<std::string, const Section*> by_op{
      {"grouped_gemm", &keys::grouped_gemm_key::kSection},
      {"attn", &keys::attention_key::kSection}};
  std::set<std::string> seen;
  for (std::size_t i = 0; i < doc.at("tables").size(); ++i) {
    const std::string op = doc.at("tables").at(i).at("op");
    if (by_op.contains(op) && seen.insert(op).second) {
      out.push_back({by_op.at(op), kCalibration, fmt::format("/tables/{}/key", i), {}, {}, true});
    }
  }
}

// The ConfigError that reading `p`'s file with `key` set to `value` gives, or "" when it reads.
std::string error_of(const Probe& p, std::string_view key, const json& value) {
  try {
    if (p.calibration) {
      std::ifstream in(source(p.file));
      json doc = json::parse(in);
      doc[json::json_pointer(p.path + "/" + std::string(key))] = value;
      (void)parse_calibration(Node(doc, "t.json"));
      return {};
    }
    if (p.ep_library) {
      std::ifstream in(source(p.file));
      json doc = json::parse(in);
      for (const std::string& set : p.base) {
        const std::size_t eq = set.find('=');
        doc[json::json_pointer(set.substr(0, eq))] = json::parse(set.substr(eq + 1));
      }
      doc[json::json_pointer(p.path + "/" + std::string(key))] = value;
      (void)parse_ep_library(Node(doc, "t.json"), "pplx_kernels", "H100 SXM");
      return {};
    }
    std::vector<std::string> sets = p.base;
    if (p.with.contains(key)) {
      sets.insert(sets.end(), p.with.at(key).begin(), p.with.at(key).end());
    }
    sets.push_back(fmt::format("{}{}{}={}", p.path, p.path.empty() ? "" : ".", key, value.dump()));
    (void)load_experiment(source(p.file), sets);
    return {};
  } catch (const ConfigError& e) {
    return e.what();
  }
}

// The JSON pointer an error names for `key` in `p`'s section (in the cluster or model file for
// their sections).
std::string pointer_of(const Probe& p, std::string_view key) {
  std::string path = p.path;
  if (!p.calibration && !p.ep_library) {
    for (const std::string_view file : {"cluster", "model"}) {
      if (path == file || path.starts_with(std::string(file) + ".")) {
        path = path.substr(std::min(path.size(), file.size() + 1));
      }
    }
    std::ranges::replace(path, '.', '/');
    path = path.empty() ? "" : "/" + path;
  }
  return fmt::format("{}/{}", path, key);
}

// One boundary: a value just outside the declared range, which must be refused at the key's
// pointer, and the bound itself, which must not be refused there for its range (other checks may
// refuse it: a degree larger than the cluster, a top_k above the experts).
struct Boundary {
  json outside;
  json inside;
};

std::vector<Boundary> boundaries(const IntegerKey& k) {
  std::vector<Boundary> out;
  if (k.lo_key.empty() && k.lo > INT64_MIN) {
    out.push_back({json(k.lo - 1), json(k.lo)});
  }
  if (k.hi_key.empty() && k.hi < INT64_MAX) {
    out.push_back({json(k.hi + 1), json(k.hi)});
  }
  return out;
}

std::vector<Boundary> boundaries(const NumberKey& k) {
  const double lo = k.sign == Sign::InRange ? k.lo : 0;
  std::vector<Boundary> out;
  if (k.lo_key.empty()) {
    // Positive: 0 itself is outside; any positive number is inside.
    const double inside = k.sign == Sign::Positive ? k.hi * 1e-6 : lo;
    const double outside =
        k.sign == Sign::Positive ? 0 : lo - (lo == 0 ? 1e-9 : std::fabs(lo) * 1e-9);
    out.push_back({json(outside), json(inside)});
  }
  if (k.hi_key.empty()) {
    out.push_back({json(k.hi + std::fabs(k.hi) * 1e-9), json(k.hi)});
  }
  return out;
}

// A refusal of a value for its range, whatever the range, as Node words it: "must be in [LO,
// HI], got", "must be >= LO, got", "must be at most HI, got", "must be > 0, got" (a model
// check's message, "must be in [1, 128] (the cluster's GPUs), got", is not one).
bool refused_for_range(const std::string& error, const std::string& pointer) {
  const std::string at = pointer + ": must be ";
  const std::size_t start = error.find(at);
  if (start == std::string::npos) {
    return false;
  }
  const std::string rest = error.substr(start + at.size());
  const auto number_then = [&](std::string_view prefix, std::string_view then) {
    if (!rest.starts_with(prefix)) {
      return false;
    }
    const std::size_t end = rest.find_first_not_of("-+0123456789.e", prefix.size());
    return end > prefix.size() && end != std::string::npos &&
           rest.compare(end, then.size(), then) == 0;
  };
  const std::size_t close = rest.find(']');
  const bool in_range = rest.starts_with("in [") && close != std::string::npos &&
                        rest.compare(close, 6, "], got") == 0;
  return in_range || rest.starts_with("> 0, got") || number_then(">= ", ", got") ||
         number_then("at most ", ", got");
}

// As the key's shape writes one value: itself, [value], or [value, value].
json shaped(Shape shape, const json& v) {
  return shape == Shape::Scalar ? v : shape == Shape::List ? json::array({v}) : json::array({v, v});
}

template <class K>
void check_key(const Probe& p, const K& k) {
  const std::string pointer = pointer_of(p, k.name) + (k.shape == Shape::Scalar ? "" : "/0");
  for (const Boundary& b : boundaries(k)) {
    CAPTURE(b.outside);
    const std::string refused = error_of(p, k.name, shaped(k.shape, b.outside));
    CHECK(refused.find(pointer + ": must be") != std::string::npos);
    CAPTURE(refused);
    const std::string read = error_of(p, k.name, shaped(k.shape, b.inside));
    CAPTURE(read);
    CHECK_FALSE(refused_for_range(read, pointer));
  }
}

TEST_CASE("every numeric key's parser enforces exactly its declared bounds") {
  std::vector<Probe> all = probes();
  add_table_key_probes(all);
  std::set<const Section*> probed;
  for (const Probe& p : all) {
    probed.insert(p.section);
    for (const KeyRef& k : p.section->keys) {
      CAPTURE(p.section->path);
      CAPTURE(key_name(k));
      if (const auto* const* integer = std::get_if<const IntegerKey*>(&k)) {
        check_key(p, **integer);
      } else if (const auto* const* number = std::get_if<const NumberKey*>(&k)) {
        check_key(p, **number);
      }
    }
  }
  // A section with a numeric key and no probe would go untested.
  for (const Section* s : schema()) {
    for (const KeyRef& k : s->keys) {
      if (std::holds_alternative<const IntegerKey*>(k) ||
          std::holds_alternative<const NumberKey*>(k)) {
        CAPTURE(s->path);
        CHECK(probed.contains(s));
      }
    }
  }
}

}  // namespace
}  // namespace hopsim::config
