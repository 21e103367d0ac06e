// The MoE layer end to end, from the shipped DeepSeek-V3 experiment scaled down: overlap,
// communication SMs, skew, passes and algorithms, read off work::run's results.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "tests/approx.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/costs/layer_kernels.hpp"
#include "workloads/ep/moe_closed_forms.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::config {
namespace {

const std::string kEp =
    std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/deepseek-v3-moe-ep64.json";

// EP16 over 2 nodes, 512 tokens per GPU, one layer, no SMs held for communication, DeepEP's
// chunks streamed: a layer in well under a second.
work::RunResult layer(std::vector<std::string> sets) {
  sets.insert(sets.begin(), {"parallel.ep=16", "parallel.dp=16", "workload.tokens_per_gpu=512",
                             "workload.layers=1", "workload.comm_sms=0"});
  const ExperimentFile file = load_experiment(kEp, sets);
  work::RunResult r = work::run(file.experiment);
  REQUIRE(r.ok());
  REQUIRE(r.cases.size() == 1);
  REQUIRE(r.cases[0].ep() != nullptr);
  return r;
}

const work::RankTime& busiest(const work::RunResult& r) {
  const work::Summary& s = r.cases[0].summary;
  return s.ranks[s.critical_rank.index()];
}

Time step(const work::RunResult& r) { return r.cases[0].summary.step; }

}  // namespace

TEST_CASE("moe layer: without overlap nothing is hidden, two micro-batches hide most of it") {
  // 2048 tokens per GPU: at 512, halving the GEMMs costs more (their weights are read twice,
  // memory-bound) than the overlap saves.
  const std::string tokens = "workload.tokens_per_gpu=2048";
  const work::RunResult plain = layer({tokens});
  CHECK(busiest(plain).exposed.seconds() > 0.9 * busiest(plain).comm.seconds());
  // Four layers, so that each layer's last combine runs under the next layer's attention.
  const work::RunResult one = layer({tokens, "workload.overlap=\"two_microbatch\""});
  const work::RunResult four =
      layer({tokens, "workload.overlap=\"two_microbatch\"", "workload.layers=4"});
  const work::RunResult four_plain = layer({tokens, "workload.layers=4"});
  CHECK(step(one) < step(plain));
  CHECK(step(four) < step(four_plain));
  // Exposed communication is the pipeline's head and tail and whatever communication exceeds
  // compute: never more than the single micro-batch's.
  CHECK(busiest(four).exposed.seconds() < 0.6 * busiest(four_plain).exposed.seconds());
  CHECK(busiest(four).exposed.seconds() >=
        busiest(four).comm.seconds() - busiest(four).compute.seconds() - 1e-9);
  // A phase's exposed communication is what runs while the rank computes nothing, of any
  // phase: the phases' parts add up to the rank's (one exchange at a time on its stream), and
  // under overlap some of a phase's communication hides under another phase's compute.
  for (const work::RunResult* r : {&plain, &one, &four}) {
    Time exposed;
    Time hidden;
    for (const work::PhaseTime& p : r->cases[0].summary.phases) {
      exposed += p.exposed;
      hidden += p.comm - p.exposed;
      CHECK(p.exposed <= p.comm);
    }
    CHECK(exposed == busiest(*r).exposed);
    if (r != &plain) {
      CHECK(hidden.seconds() > 0.3 * busiest(*r).comm.seconds());
    }
  }
}

// Every figure of the two summaries, compared exactly.
void same_summary(const work::Summary& x, const work::Summary& y) {
  CHECK(x.step == y.step);
  CHECK(x.critical_rank == y.critical_rank);
  REQUIRE(x.ranks.size() == y.ranks.size());
  for (std::size_t r = 0; r < y.ranks.size(); ++r) {
    CHECK(x.ranks[r].busy == y.ranks[r].busy);
    CHECK(x.ranks[r].compute == y.ranks[r].compute);
    CHECK(x.ranks[r].comm == y.ranks[r].comm);
  }
  CHECK(x.nvlink_bytes.n == y.nvlink_bytes.n);
  CHECK(x.ib_bytes.n == y.ib_bytes.n);
  CHECK(x.flops.n == test::approx(y.flops.n).epsilon(1e-12));
  CHECK(x.mean_busy_s == test::approx(y.mean_busy_s).epsilon(1e-12));
  REQUIRE(x.phases.size() == y.phases.size());
  for (std::size_t p = 0; p < y.phases.size(); ++p) {
    CHECK(x.phases[p].start == y.phases[p].start);
    CHECK(x.phases[p].end == y.phases[p].end);
    CHECK(x.phases[p].compute == y.phases[p].compute);
    CHECK(x.phases[p].comm == y.phases[p].comm);
  }
  for (std::size_t k = 0; k < work::kKernelClasses; ++k) {
    const auto kind = static_cast<work::KernelClass>(k);
    CHECK(x.compute_kernels.time(kind) == y.compute_kernels.time(kind));
  }
}

TEST_CASE("moe layer: repeated layers give what simulating every layer gives, exactly") {
  // 16 layers, repeated where 2, 3 and 4 of them show a steady schedule, else simulated whole:
  // skewed routing with two micro-batches is steady; in this small DualPipe pair the GPUs that
  // wait still drift a little from layer to layer, so it is simulated whole.
  const std::vector<std::pair<std::vector<std::string>, bool>> cases{
      {{"workload.overlap=\"two_microbatch\"", "workload.routing.distribution=\"zipf\"",
        "workload.routing.zipf_s=1.2"},
       true},
      {{"workload.passes=\"both\""}, true},
      {{"workload.overlap=\"dualpipe_pair\"", "workload.comm_sms=20"}, false}};
  for (const auto& [sets, repeats] : cases) {
    std::vector<std::string> repeated = sets;
    repeated.emplace_back("workload.layers=16");
    std::vector<std::string> whole = repeated;
    whole.emplace_back("workload.repeat_layers=false");
    const work::RunResult a = layer(repeated);
    const work::RunResult b = layer(whole);
    INFO(sets.front());
    CHECK(a.cases[0].ep()->layers_simulated == (repeats ? 4 : 16));
    CHECK(a.probes.size() == 3);
    CHECK(b.cases[0].ep()->layers_simulated == 16);
    CHECK(b.probes.empty());
    same_summary(a.cases[0].summary, b.cases[0].summary);
    // The simulated plan holds four layers' tasks of the sixteen.
    CHECK((repeats ? 4 : 1) * a.cases[0].plan.tasks().size() == b.cases[0].plan.tasks().size());
  }
  // Up to 12 layers every layer is simulated, without probes.
  const work::RunResult twelve = layer({"workload.layers=12"});
  CHECK(twelve.probes.empty());
  CHECK(twelve.cases[0].ep()->layers_simulated == 12);
}

TEST_CASE("moe layer: two micro-batches split the sequence's attention, not its amount") {
  // The second half's queries see the first half's keys: a causal h x h block and a full one,
  // h(h+1)/2 + h^2 + h(h+1)/2 = 2h(2h+1)/2 pairs, the whole sequence's. The attention part's
  // FLOPs (with it, less without it: experts and router alike) are the unsplit layer's.
  const auto attention_flops = [](const std::string& overlap) {
    const std::string o = "workload.overlap=\"" + overlap + "\"";
    const double with = layer({o}).cases[0].summary.flops.n;
    const double without = layer({o, "workload.attention=false"}).cases[0].summary.flops.n;
    return with - without;
  };
  const double plain = attention_flops("none");
  CHECK(plain > 0);
  CHECK(attention_flops("two_microbatch") == hopsim::test::approx(plain).epsilon(1e-12));
}

TEST_CASE("moe layer: a DualPipe chunk pair hides each exchange under the other's compute") {
  const std::string tokens = "workload.tokens_per_gpu=2048";
  const work::RunResult pair =
      layer({tokens, "workload.overlap=\"dualpipe_pair\"", "workload.layers=2"});
  // The same work without overlap: one micro-batch's forward, then its backward.
  const work::RunResult apart = layer({tokens, "workload.passes=\"both\"", "workload.layers=2"});
  CHECK(pair.cases[0].ep()->micro_batches == 2);
  CHECK(pair.cases[0].summary.ib_bytes.n > 0);
  CHECK(step(pair) < step(apart));
  const work::RankTime& t = busiest(pair);
  CHECK(t.exposed.seconds() < 0.5 * t.comm.seconds());
  CHECK(busiest(apart).exposed.seconds() > 0.8 * busiest(apart).comm.seconds());
}

TEST_CASE("moe layer: recomputation runs the forward's kernels again inside the backward") {
  // A DualPipe pair with DeepSeek-V3's modules against one without: the backward half's norms,
  // rotary and layout copies again are exactly those of a forward of the same tokens, the
  // up-projections their parameters' share of its GEMMs, the SwiGLUs again take more time.
  const std::string tokens = "workload.tokens_per_gpu=1024";
  const std::vector<std::string> pair{tokens, "workload.overlap=\"dualpipe_pair\""};
  std::vector<std::string> again = pair;
  again.emplace_back(R"(workload.recompute_modules=["layernorm", "mla_up_proj", "moe_act"])");
  const work::RunResult with = layer(again);
  const work::RunResult without = layer(pair);
  // No SMs held (comm_sms 0): the pairs' kernels run at the forward's speed.
  const work::RunResult forward = layer({tokens});
  const double slow = 1.0;
  const auto total = [](const work::RunResult& r, work::KernelClass k) {
    return r.cases[0].summary.compute_kernels.time(k);
  };
  using K = work::KernelClass;
  // The pairs' memory-bound kernels share HBM with their exchanges (each pair its own share);
  // the forward alone overlaps nothing.
  const double s_with = with.cases[0].ep()->hbm_share;
  const double s_without = without.cases[0].ep()->hbm_share;
  REQUIRE(forward.cases[0].ep()->hbm_share == 0.0);
  REQUIRE(s_with > 0.0);
  REQUIRE(s_without > s_with);  // the same bytes over more compute
  for (const K k : {K::Norm, K::Rotary, K::Copy}) {
    CAPTURE(work::kernel_class_name(k));
    CHECK(total(forward, k) > Time{});
    CHECK(total(with, k).seconds() * (1 - s_with) ==
          test::approx(total(without, k).seconds() * (1 - s_without) +
                       slow * total(forward, k).seconds())
              .epsilon(1e-6));  // each kernel's time rounds up to a picosecond
  }
  // Under DeepSeek's FP8 recipe the up-projections are GEMMs of their own: the same two again,
  // q_up 1024 x 24,576 x 1,536 and kv_up 1024 x 32,768 x 512, of the forward's GEMMs.
  const ExperimentFile file = load_experiment(kEp, {"parallel.ep=16", "parallel.dp=16"});
  const work::ModelSpec& m = *file.experiment.model;
  const work::ComputeModel model = work::compute_model(file.experiment);
  const work::LayerCosts attention =
      work::moe_attention_costs(m, file.experiment.parallel, 1024, 0, true, model);
  const work::LayerCosts shared = work::moe_shared_costs(m, 1024, model);
  double up = 0;
  double gemms = 0;
  for (const work::KernelCosts* list : {&attention.fwd, &shared.fwd}) {
    for (const auto& [name, cost] : *list) {
      if (cost.kind == K::GemmFprop) {
        gemms += cost.time.seconds();
        up += name == "q_up_projection" || name == "kv_up_projection" ? cost.time.seconds() : 0;
      }
    }
  }
  CHECK(up == test::approx(model.gemm(work::Dtype::Fp8, 1024, 24576, 1536,
                                      work::GemmRole::Fprop).time.seconds() +
                           model.gemm(work::Dtype::Fp8, 1024, 32768, 512,
                                      work::GemmRole::Fprop).time.seconds())
                  .epsilon(1e-12));
  CHECK((total(with, K::GemmFprop) - total(without, K::GemmFprop)).seconds() ==
        test::approx(slow * up / gemms * total(forward, K::GemmFprop).seconds()).epsilon(1e-6));
  CHECK(total(with, K::SwiGlu) > total(without, K::SwiGlu));
  CHECK(total(with, K::AttentionFwd) == total(without, K::AttentionFwd));
  CHECK(step(with) > step(without));
  // What a forward-only layer or this model cannot run again is refused.
  const auto fails_with = [&](std::vector<std::string> sets, const std::string& message) {
    CHECK_THROWS_WITH_AS(load_experiment(kEp, sets), message.c_str(), ConfigError);
  };
  fails_with({R"(workload.recompute_modules=["layernorm"])"},
             R"(--set workload.recompute_modules=["layernorm"]: /workload/recompute_modules: )"
             R"(recomputation runs before a backward: passes "both" or "backward", not )"
             R"("forward")");
  fails_with({"workload.passes=both", R"(workload.recompute_modules=["mlp"])"},
             R"(--set workload.recompute_modules=["mlp"]: /workload/recompute_modules: mlp )"
             R"(recomputes a dense layer's MLP, which a MoE layer does not have (moe_act: the )"
             R"(experts' SwiGLU))");
  fails_with({"workload.passes=both", R"(workload.recompute_modules=["norms"])"},
             R"(--set workload.recompute_modules=["norms"]: /workload/recompute_modules/0: )"
             R"(expected one of "core_attn", "layernorm", "mlp", "moe_act", "mla_up_proj", "moe", )"
             R"("shared_experts", got "norms")");
  fails_with({"workload.passes=both", R"(workload.recompute_modules=["moe"])"},
             R"(--set workload.recompute_modules=["moe"]: /workload/recompute_modules: moe )"
             R"(recomputes the whole MoE part, its exchanges too, which a training step prices )"
             R"((kind training_step); here: moe_act and shared_experts)");
}

TEST_CASE("moe layer: nodes and GPUs per token are means over every token routed") {
  // A DualPipe pair routes two whole sequences, two micro-batches two halves of one: the means
  // divide by every token routed (the pair's were twice the truth: 7.26 nodes under a limit of
  // 4). EP16 over 2 nodes, top-8: at most 2 nodes and 8 GPUs, about the same in every mode.
  const work::EpDetails plain = *layer({"workload.passes=\"both\""}).cases[0].ep();
  for (const char* overlap : {"dualpipe_pair", "two_microbatch"}) {
    CAPTURE(overlap);
    const work::RunResult r =
        layer({"workload.passes=\"both\"", fmt::format("workload.overlap=\"{}\"", overlap)});
    const work::EpDetails& ep = *r.cases[0].ep();
    CHECK(ep.nodes_per_token_mean >= 1.0);
    CHECK(ep.nodes_per_token_mean <= 2.0);
    CHECK(ep.gpus_per_token_mean <= 8.0);
    CHECK(ep.nodes_per_token_mean ==
          hopsim::test::approx(plain.nodes_per_token_mean).epsilon(0.05));
    CHECK(ep.gpus_per_token_mean == hopsim::test::approx(plain.gpus_per_token_mean).epsilon(0.05));
  }
}

TEST_CASE("moe layer: overlapped exchanges share HBM with the memory-bound kernels only") {
  // The same pair with its exchanges at a quarter of the bytes (FP8 both ways against FP8 and
  // BF16): its share of HBM shrinks; GEMMs and attention take what they took; every
  // memory-bound kernel class takes its time over 1 - share.
  const std::vector<std::string> pair{"workload.tokens_per_gpu=1024",
                                      "workload.overlap=\"dualpipe_pair\""};
  std::vector<std::string> thin = pair;
  thin.emplace_back("workload.combine_bytes_per_element=1.0");
  const work::RunResult wide = layer(pair);
  const work::RunResult narrow = layer(thin);
  const double s_wide = wide.cases[0].ep()->hbm_share;
  const double s_narrow = narrow.cases[0].ep()->hbm_share;
  CHECK(s_wide > s_narrow);
  CHECK(s_narrow > 0.0);
  CHECK(s_wide < 0.2);
  CHECK(layer({"workload.tokens_per_gpu=1024"}).cases[0].ep()->hbm_share == 0.0);
  const work::KernelTally& a = wide.cases[0].summary.compute_kernels;
  const work::KernelTally& b = narrow.cases[0].summary.compute_kernels;
  for (std::size_t i = 0; i < work::kKernelClasses; ++i) {
    const auto k = static_cast<work::KernelClass>(i);
    CAPTURE(work::kernel_class_name(k));
    if (work::memory_bound(k) && b.time(k) > Time{}) {
      CHECK(a.time(k).seconds() * (1 - s_wide) ==
            test::approx(b.time(k).seconds() * (1 - s_narrow)).epsilon(1e-6));
    } else {
      CHECK(a.time(k) == b.time(k));
    }
  }
}

TEST_CASE("moe layer: communication SMs slow the kernels beside an exchange, and only compute") {
  // Without overlap only the shared experts run beside an exchange (the forward's dispatch,
  // which outlasts them): they alone take SMs / (SMs - comm_sms) as long; the routed experts
  // wait for their tokens.
  const std::vector<std::string> twenty_sms{"workload.attention=false", "workload.comm_sms=20"};
  const work::RunResult none = layer({"workload.attention=false"});
  const work::RunResult twenty = layer(twenty_sms);
  const double s = 132.0 / 112.0;
  REQUIRE(twenty.cases[0].ep()->compute_slowdown == hopsim::test::approx(s));
  const ExperimentFile file = load_experiment(kEp, {"parallel.ep=16", "parallel.dp=16"});
  const work::ComputeModel model = work::compute_model(file.experiment);
  const work::LayerCosts shared =
      work::moe_shared_costs(*file.experiment.model, 512, model,
                             std::get<work::MoeLayerJob>(file.experiment.job).dtypes.shared);
  double shared_s = 0;
  for (const auto& [name, cost] : shared.fwd) {
    shared_s += cost.time.seconds();
  }
  REQUIRE(shared_s > 0);
  CHECK(busiest(twenty).compute.seconds() ==
        hopsim::test::approx(busiest(none).compute.seconds() + (s - 1) * shared_s).epsilon(1e-6));
  CHECK(twenty.cases[0].summary.ib_bytes == none.cases[0].summary.ib_bytes);
  // With two micro-batches a kernel may run beside the other one's exchange, and is slowed for
  // the time it does: every compute-bound kind takes between 1 and s times as long, some less
  // than s (the exchanges do not run all the time); memory-bound ones also share HBM.
  const std::string two = "workload.overlap=\"two_microbatch\"";
  const work::RunResult two_none = layer({"workload.attention=false", two});
  std::vector<std::string> sets = twenty_sms;
  sets.push_back(two);
  const work::RunResult two_twenty = layer(sets);
  const work::KernelTally& plain = two_none.cases[0].summary.compute_kernels;
  const work::KernelTally& slowed = two_twenty.cases[0].summary.compute_kernels;
  int compared = 0;
  int partly = 0;
  for (std::size_t i = 0; i < work::kKernelClasses; ++i) {
    const auto k = static_cast<work::KernelClass>(i);
    CAPTURE(work::kernel_class_name(k));
    if (!work::memory_bound(k) && plain.time(k) > Time{}) {
      CHECK(slowed.time(k) >= plain.time(k));
      CHECK(slowed.time(k).seconds() <= plain.time(k).seconds() * s * (1 + 1e-9));
      partly += slowed.time(k).seconds() < plain.time(k).seconds() * s * (1 - 1e-3) ? 1 : 0;
      ++compared;
    }
  }
  CHECK(compared > 0);
  CHECK(partly > 0);
}

TEST_CASE("moe layer: zipf routing raises the busiest rank's load and the layer time") {
  const work::RunResult uniform = layer({});
  const work::RunResult zipf = layer({"workload.routing={\"distribution\": \"zipf\"}"});
  const double u = work::max_over_mean(uniform.cases[0].ep()->tokens_per_rank);
  const double z = work::max_over_mean(zipf.cases[0].ep()->tokens_per_rank);
  CHECK(u < 1.2);
  CHECK(z > 1.3);
  CHECK(step(zipf) > step(uniform));
}

TEST_CASE("moe layer: routing \"balanced\" is uniform, \"training\" loads the busiest GPU more") {
  const work::RunResult uniform = layer({});
  const work::RunResult balanced = layer({"workload.routing=balanced"});
  const work::RunResult training = layer({"workload.routing=training"});
  CHECK(balanced.cases[0].ep()->tokens_per_expert == uniform.cases[0].ep()->tokens_per_expert);
  const double u = work::max_over_mean(uniform.cases[0].ep()->tokens_per_rank);
  const double t = work::max_over_mean(training.cases[0].ep()->tokens_per_rank);
  // 16 x 512 tokens, each GPU's tokens one sequence, runs of kTrainingRunTokens (cut to 512):
  // 16 independent choices over 256 experts, 16 per GPU.
  CHECK(u < 1.2);
  CHECK(t > 1.5);
  CHECK(step(training) > step(uniform));
  const work::RunResult shorter = layer({R"(workload.routing={"distribution": "training", )"
                                        R"("run_tokens": 64})"});
  CHECK(work::max_over_mean(shorter.cases[0].ep()->tokens_per_rank) < t);
  // The bias balancer's residual: the same draw, its deviation from even kept at 0.04 / 0.52.
  const work::RunResult bias = layer({R"(workload.routing={"distribution": "training", )"
                                     R"("balancer": "bias"})"});
  const double b = work::max_over_mean(bias.cases[0].ep()->tokens_per_rank);
  CHECK(b < 1 + (t - 1) / 3);
  CHECK(step(bias) < step(training));
  CHECK(layer({R"(workload.routing={"distribution": "training", "balancer": "aux_loss"})"})
            .cases[0]
            .ep()
            ->tokens_per_rank == training.cases[0].ep()->tokens_per_rank);
}

TEST_CASE("moe layer: the bias balancer evens a skewed router, capacity drops are counted") {
  const std::string zipf = R"(workload.routing={"distribution": "zipf"})";
  const work::RunResult skewed = layer({zipf});
  const work::RunResult balanced =
      layer({R"(workload.routing={"distribution": "zipf", "balancer": "bias", "steps": 50})"});
  const work::EpDetails& ep = *balanced.cases[0].ep();
  REQUIRE(ep.balance_steps.size() == 50);
  CHECK(ep.balance_steps.back() - 1 < (ep.balance_steps.front() - 1) * 2 / 3);
  CHECK(work::max_over_mean(ep.tokens_per_rank) <
        work::max_over_mean(skewed.cases[0].ep()->tokens_per_rank));
  CHECK(step(balanced) < step(skewed));
  CHECK(skewed.cases[0].ep()->dropped == 0);
  const work::RunResult capped = layer({zipf, "workload.capacity_factor=1.0"});
  const work::EpDetails& c = *capped.cases[0].ep();
  CHECK(c.dropped > 0);
  CHECK(c.selections == 16 * 512 * 8);
  std::int64_t rows = 0;
  for (std::int64_t r : c.tokens_per_rank) {
    rows += r;
  }
  CHECK(rows + c.dropped == c.selections);
  CHECK(step(capped) < step(skewed));
}

TEST_CASE("moe layer: backward moves the forward's bytes again, rows conserve tokens x top-k") {
  const work::RunResult fwd = layer({});
  const work::RunResult both = layer({"workload.passes=\"both\""});
  CHECK(both.cases[0].summary.ib_bytes.n == 2 * fwd.cases[0].summary.ib_bytes.n);
  CHECK(both.cases[0].summary.nvlink_bytes.n == 2 * fwd.cases[0].summary.nvlink_bytes.n);
  CHECK(step(both) > 2 * step(fwd));  // GEMMs at twice the FLOPs, attention at 2.5 times
  std::int64_t rows = 0;
  for (std::int64_t r : fwd.cases[0].ep()->tokens_per_rank) {
    rows += r;
  }
  CHECK(rows == 16 * 512 * 8);
  CHECK(fwd.cases[0].ep()->nodes_per_token_mean <= 2.0);
  CHECK(fwd.cases[0].ep()->nodes_per_token_mean >= 1.0);
}

TEST_CASE("moe layer: every algorithm runs, two-tier sends fewer InfiniBand bytes than flat") {
  const work::RunResult two_tier = layer({});
  const work::RunResult flat = layer({"workload.algorithm=\"flat\""});
  const work::RunResult low = layer({"workload.algorithm=\"low_latency\""});
  CHECK(two_tier.cases[0].summary.ib_bytes.n < flat.cases[0].summary.ib_bytes.n);
  CHECK(flat.cases[0].summary.ib_bytes.n <= low.cases[0].summary.ib_bytes.n);
  CHECK(step(low) > Time{});
}

TEST_CASE("moe layer: streamed pieces agree with every piece its own flows, at a few flows") {
  // Forward and backward, even and skewed routing, DeepEP's pieces. Streamed lets a stage's
  // rest run ahead of the pieces that feed it, a little optimistic where the pipeline is
  // short: 512 tokens per GPU on EP32 (about 10 pieces per node pair) within 1.5%, 2048 on
  // EP16 within 0.5% (docs/expert-parallelism.md has the measured table).
  struct Setting {
    const char* ep;
    const char* tokens;
    const char* distribution;
    double within;
  };

  for (const Setting& c :
       {Setting{"32", "512", "uniform", 0.015}, Setting{"32", "512", "zipf", 0.015},
        Setting{"16", "2048", "uniform", 0.005}}) {
    CAPTURE(c.ep);
    CAPTURE(c.tokens);
    CAPTURE(c.distribution);
    const std::vector<std::string> sets{
        std::string("parallel.ep=") + c.ep, std::string("parallel.dp=") + c.ep,
        std::string("workload.tokens_per_gpu=") + c.tokens, "workload.passes=both",
        std::string("workload.routing.distribution=") + c.distribution};
    std::vector<std::string> each_sets = sets;
    each_sets.emplace_back("workload.pieces=each");
    const work::RunResult streamed = layer(sets);
    const work::RunResult each = layer(each_sets);
    const work::CaseResult& s = streamed.cases[0];
    const work::CaseResult& e = each.cases[0];
    CHECK(s.summary.ib_bytes == e.summary.ib_bytes);
    CHECK(s.summary.nvlink_bytes == e.summary.nvlink_bytes);
    CHECK(step(streamed).seconds() == hopsim::test::approx(step(each).seconds()).epsilon(c.within));
    CHECK(busiest(streamed).comm.seconds() ==
          hopsim::test::approx(busiest(each).comm.seconds()).epsilon(3 * c.within));
    // Per node pair 2 InfiniBand flows and 2 per forward, against 8 per piece.
    CHECK(s.outcome.flows * 4 < e.outcome.flows);
  }
}

TEST_CASE("moe layer: invalid settings are clear errors naming the key") {
  const auto fails_with = [&](std::vector<std::string> sets, const std::string& message) {
    CHECK_THROWS_WITH_AS(load_experiment(kEp, sets), message.c_str(), ConfigError);
  };
  fails_with({"workload.comm_sms=132"},
             "--set workload.comm_sms=132: /workload/comm_sms: 132 SMs for communication leave "
             "none of the GPU's 132 for compute");
  fails_with({"workload.overlap=two_microbatch", "workload.tokens_per_gpu=4095"},
             "--set workload.tokens_per_gpu=4095: /workload/tokens_per_gpu: 4095 tokens do not "
             "split into 2 micro-batches (overlap \"two_microbatch\")");
  fails_with({"workload.algorithm=flat", "workload.chunk_tokens=64"},
             "--set workload.chunk_tokens=64: /workload/chunk_tokens: only for algorithm "
             "\"two_tier\", not \"flat\"");
  fails_with({"workload.algorithm=low_latency", "workload.pieces=each"},
             "--set workload.pieces=each: /workload/pieces: only for algorithm \"two_tier\", "
             "not \"low_latency\"");
  fails_with({"workload.pieces=all"},
             "--set workload.pieces=all: /workload/pieces: expected one of \"each\", "
             "\"streamed\", got \"all\"");
  fails_with({"workload.routing={\"zipf_s\": 2}"},
             "--set workload.routing={\"zipf_s\": 2}: /workload/routing/zipf_s: only with "
             "distribution \"zipf\"");
  fails_with({"workload.overlap=dualpipe_pair", "workload.passes=forward"},
             "--set workload.passes=forward: /workload/passes: overlap \"dualpipe_pair\" runs a "
             "forward chunk against a backward chunk: passes \"both\", not \"forward\"");
  fails_with({R"(workload.routing={"steps": 10})"},
             R"(--set workload.routing={"steps": 10}: /workload/routing/steps: only with )"
             R"(balancer "bias")");
  // The shipped experiment's 20 communication SMs make compute 132/112 as long.
  fails_with({"workload.tokens_per_gpu=16777216", "workload.layers=100"},
             "--set workload.tokens_per_gpu=16777216: /workload/tokens_per_gpu: 100 layer(s) of "
             "16777216 tokens per GPU may take ~1.73e+07 s of compute per GPU (roofline, "
             "worst-case routing); at most 1e+05 s are simulated");
  fails_with({"workload.routing.distribution=counts", "workload.routing.counts=[1, 2]"},
             "--set workload.routing.counts=[1, 2]: /workload/routing/counts: expected 256 "
             "counts (one per routed expert), got 2");
  fails_with({"workload.routing.distribution=counts"},
             "--set workload.routing.distribution=counts: /workload/routing/distribution: "
             "distribution \"counts\" needs counts: an array of one number per expert, or a "
             "JSON file that holds one");
  fails_with({"workload.routing=sometimes"},
             "--set workload.routing=sometimes: /workload/routing: expected \"balanced\", "
             "\"training\" or an object, got \"sometimes\"");
  fails_with({R"(workload.routing={"run_tokens": 100})"},
             R"(--set workload.routing={"run_tokens": 100}: /workload/routing/run_tokens: only )"
             R"(with distribution "training")");
  fails_with({"workload.routing.distribution=training", "workload.routing.balancer=none"},
             R"(--set workload.routing.balancer=none: /workload/routing/balancer: distribution )"
             R"("training" is what a balancer leaves (its residual): balancer "aux_loss" (the )"
             R"(default) or "bias")");
  fails_with({"workload.routing.distribution=training", "workload.routing.balancer=bias",
              "workload.routing.steps=10"},
             R"(--set workload.routing.steps=10: /workload/routing/steps: not with distribution )"
             R"("training" (its balancer names the residual the batch holds; none is simulated))");
  fails_with({R"(workload.routing={"alpha": 0.5})"},
             R"(--set workload.routing={"alpha": 0.5}: /workload/routing/alpha: only with )"
             R"(distribution "dirichlet")");
  fails_with({R"(workload.routing={"aux_loss_weight": 0.1})"},
             R"(--set workload.routing={"aux_loss_weight": 0.1}: )"
             R"(/workload/routing/aux_loss_weight: only with balancer "aux_loss")");
  fails_with({R"(solver={"tolerance": 0.2})"},
             R"(--set solver={"tolerance": 0.2}: /solver/tolerance: must be in [0, 0.1], got 0.2)");
  // The job checks its own settings, so that a program calling work::run is refused too.
  ExperimentFile file = load_experiment(kEp, {"workload.algorithm=flat"});
  auto& job = std::get<work::MoeLayerJob>(file.experiment.job);
  job.pieces = work::Pieces::Each;
  const work::RunResult r = work::run(file.experiment);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].path == "/workload/pieces");
  CHECK(r.problems[0].message == "only for algorithm \"two_tier\", not \"flat\"");
}

TEST_CASE("moe layer: redundant copies of hot experts even a skewed router's load") {
  const std::string zipf = "workload.routing.distribution=zipf";
  const work::RunResult plain = layer({zipf});
  const work::RunResult copies = layer({zipf, "workload.redundant_experts=32"});
  const work::EpDetails& ep = *copies.cases[0].ep();
  REQUIRE(ep.placement.size() == 16);
  for (const std::vector<int>& rank : ep.placement) {
    CHECK(rank.size() == 256 / 16 + 2);
  }
  CHECK(work::max_over_mean(ep.tokens_per_rank) <
        0.7 * work::max_over_mean(plain.cases[0].ep()->tokens_per_rank));
  CHECK(step(copies) < step(plain));
  const auto fails_with = [&](std::vector<std::string> sets, const std::string& text) {
    CHECK_THROWS_WITH_AS(load_experiment(kEp, sets), doctest::Contains(text.c_str()),
                         ConfigError);
  };
  fails_with({"parallel.ep=16", "parallel.dp=16", "workload.redundant_experts=8"},
             "/workload/redundant_experts: 8 redundant experts do not spread evenly over the EP "
             "group's 16 GPUs");
  fails_with({"parallel.ep=16", "parallel.dp=16", "workload.placement=[[0, 1]]"},
             "/workload/placement: 1 lists of experts for an EP group of 16 ranks");
}

TEST_CASE("moe layer: routing counts from a file beside the experiment replay a histogram") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "hopsim-counts-test";
  fs::create_directories(dir);
  std::string counts = "[";
  for (int e = 0; e < 256; ++e) {
    counts += e == 0 ? "" : ", ";
    counts += e < 16 ? "40" : "1";  // GPU 0's experts are hot (experts 0-15 at EP 16)
  }
  counts += "]";
  std::ofstream(dir / "router-log.json") << counts;
  std::ofstream(dir / "experiment.json") << R"({"name": "counts",
    "cluster": ")" + std::string(HOPSIM_SOURCE_DIR) + R"(/configs/clusters/h800-deepseek.json",
    "model": ")" + std::string(HOPSIM_SOURCE_DIR) + R"(/configs/models/deepseek-v3.json",
    "parallel": {"ep": 16, "dp": 16},
    "workload": {"kind": "moe_layer", "tokens_per_gpu": 512,
                 "routing": {"distribution": "counts", "counts": "router-log.json"}}})";
  const ExperimentFile file = load_experiment((dir / "experiment.json").string(), {});
  const work::RunResult r = work::run(file.experiment);
  REQUIRE(r.ok());
  const std::vector<std::int64_t>& rows = r.cases[0].ep()->tokens_per_rank;
  CHECK(rows[0] == *std::max_element(rows.begin(), rows.end()));
  CHECK(work::max_over_mean(rows) > 3);
  std::ofstream(dir / "router-log.json") << "[1, 2";
  CHECK_THROWS_WITH_AS(load_experiment((dir / "experiment.json").string(), {}),
                       doctest::Contains("router-log.json"), ConfigError);
  fs::remove_all(dir);
}


TEST_CASE("moe layer: BF16 experts run BF16 grouped GEMMs without casts, over BF16 rows") {
  // The expert dtype follows the workload: BF16 experts have no FP8 casts, their grouped GEMMs
  // ask the BF16 rate, their rows arrive in BF16 (dispatch 2 bytes per element unless set).
  const std::string unset = "workload.dispatch_bytes_per_element=null";
  const ExperimentFile fp8 = load_experiment(kEp, {"parallel.ep=16", "parallel.dp=16", unset});
  const ExperimentFile bf16 = load_experiment(
      kEp, {"parallel.ep=16", "parallel.dp=16", unset, R"(workload.expert_dtype="bf16")"});
  const auto job = [](const ExperimentFile& f) {
    return std::get<work::MoeLayerJob>(f.experiment.job);
  };
  CHECK(job(fp8).dtypes.experts == work::Dtype::Fp8);
  CHECK(job(fp8).dtypes.shared == work::Dtype::Fp8);
  CHECK(job(fp8).dispatch_bytes_per_element == 1.0);
  CHECK(job(bf16).dtypes.experts == work::Dtype::Bf16);
  CHECK(job(bf16).dtypes.shared == work::Dtype::Bf16);  // falls back to expert_dtype
  CHECK(job(bf16).dtypes.router == work::Dtype::Bf16);
  CHECK(job(bf16).dispatch_bytes_per_element == 2.0);
  const work::ModelSpec& m = *fp8.experiment.model;
  const work::ComputeModel model = work::compute_model(fp8.experiment);
  const work::ParallelSpec& p = fp8.experiment.parallel;
  const work::LayerCosts f8 = work::moe_expert_costs(m, p, 512, model, 0, work::Dtype::Fp8);
  const work::LayerCosts b16 = work::moe_expert_costs(m, p, 512, model, 0, work::Dtype::Bf16);
  const auto casts = [](const work::LayerCosts& c) {
    int n = 0;
    for (const work::KernelCosts* list : {&c.fwd, &c.bwd}) {
      for (const auto& kernel : *list) {
        n += kernel.second.kind == work::KernelClass::Fp8Cast ? 1 : 0;
      }
    }
    return n;
  };
  CHECK(casts(f8) == 3);  // down's input forward; both output gradients backward
  CHECK(casts(b16) == 0);
  REQUIRE(f8.fwd.size() == b16.fwd.size() + 1);
  const auto find = [](const work::KernelCosts& list, const std::string& name) {
    const auto it = std::find_if(list.begin(), list.end(),
                                 [&](const auto& kernel) { return kernel.first == name; });
    REQUIRE(it != list.end());
    return it->second;
  };
  const std::int64_t local = m.moe.routed_experts / p.ep;
  CHECK(find(b16.fwd, "experts_gate_up").time ==
        model.grouped_gemm(work::Dtype::Bf16, local, 512, 2 * m.moe.expert_ffn_hidden, m.hidden,
                           work::GemmRole::Fprop).time);
  CHECK(find(b16.fwd, "experts_gate_up").time > find(f8.fwd, "experts_gate_up").time);
  // Permute reads BF16 rows: 2 bytes more per element than FP8's.
  CHECK(find(b16.fwd, "permute").bytes.n - find(f8.fwd, "permute").bytes.n ==
        2 * local * 512 * m.hidden);
  // The shared experts and the router follow their own keys.
  const work::LayerCosts shared16 = work::moe_shared_costs(m, 512, model, work::Dtype::Bf16);
  CHECK(find(shared16.fwd, "shared_gate_up").time ==
        model.gemm(work::Dtype::Bf16, 512, 2 * m.moe.expert_ffn_hidden, m.hidden,
                   work::GemmRole::Fprop).time);
  const work::LayerCosts router8 =
      work::moe_attention_costs(m, p, 512, 0, false, model, work::Dtype::Fp8);
  CHECK(find(router8.fwd, "router").time ==
        model.gemm(work::Dtype::Fp8, 512, m.moe.routed_experts, m.hidden,
                   work::GemmRole::Fprop).time);
  // And the layer runs, slower than its FP8 twin.
  const work::RunResult slow = layer({R"(workload.expert_dtype="bf16")"});
  const work::RunResult fast = layer({});
  CHECK(step(slow) > step(fast));
}

TEST_CASE("moe layer: each FP8 recipe row moves its own cast bytes") {
  using R = work::Fp8Recipe;
  const auto bytes = [](R r) { return work::fp8_cast_bytes(1000, 10, 30, r); };
  CHECK(bytes(R::CastTranspose).fwd.n == 4 * 1000 * 10);
  CHECK(bytes(R::CastTranspose).bwd.n == 4 * 1000 * 30);
  CHECK(bytes(R::DeepSeek).fwd.n == 3 * 1000 * 10);
  CHECK(bytes(R::DeepSeek).bwd.n == 6 * 1000 * 10 + 6 * 1000 * 30);
  CHECK(bytes(R::Current).fwd.n == 6 * 1000 * 10);
  CHECK(bytes(R::Current).bwd.n == 6 * 1000 * 30);
  CHECK(bytes(R::Mxfp8).fwd.n == 40625);
  CHECK(bytes(R::Mxfp8).bwd.n == 121875);
  // NVFP4: an amax read (2), a read (2), two copies of half a byte with a 1-byte scale per 16.
  CHECK(bytes(R::Nvfp4).fwd.n == 51250);
  CHECK(bytes(R::Nvfp4).bwd.n == 153750);
  for (const R r : {R::CastTranspose, R::DeepSeek, R::Current, R::Mxfp8, R::Nvfp4}) {
    CHECK(work::fp8_recipe_named(work::fp8_recipe_name(r)) == r);
  }
  // Each is a workload choice.
  const ExperimentFile current =
      load_experiment(kEp, {"parallel.ep=16", "parallel.dp=16", R"(workload.fp8_recipe="current")"});
  CHECK(current.experiment.fp8_recipe == R::Current);
}
}  // namespace hopsim::config
