// The training step end to end: a step without pipeline or data parallelism is the sum of its
// parts to the picosecond; folded layers equal the same layers chained; memory and layouts
// that cannot run are clear errors; the closed-form layout (layers per stage, activations).
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"
#include "workloads/step/schedule_table.hpp"
#include "workloads/step/step_model.hpp"

namespace hopsim::config {
namespace {

const std::string kExperiments = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/";
const std::string kSmall = kExperiments + "llama3-8b-step-32gpu.json";

work::RunResult run_with(const std::string& file, const std::vector<std::string>& sets) {
  const ExperimentFile f = load_experiment(file, sets);
  work::RunResult r = work::run(f.experiment);
  REQUIRE(r.ok());
  REQUIRE(r.cases.size() == 1);
  return r;
}

std::string error_of(const std::string& file, const std::vector<std::string>& sets) {
  try {
    load_experiment(file, sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Total duration of a case's tasks in phase `name`.
Time phase_duration(const work::CaseResult& c, const std::string& name) {
  Time t;
  for (std::size_t i = 0; i < c.plan.tasks().size(); ++i) {
    if (c.plan.phases()[c.plan.tasks()[i].phase].name() == name) {
      t += c.outcome.times[i].end - c.outcome.times[i].start;
    }
  }
  return t;
}

}  // namespace

TEST_CASE("training step: pp 1, dp 1 is its layers, the head and the optimizer, exactly") {
  const work::RunResult r = run_with(
      kSmall, {"parallel.tp=4", "parallel.pp=1", "parallel.dp=1", "workload.global_batch=2",
               "workload.schedule=\"1f1b\"", "workload.virtual_stages=1"});
  const work::CaseResult& c = r.cases[0];
  REQUIRE(c.step() != nullptr);
  const work::StepDetails& d = *c.step();
  REQUIRE(d.layers.size() == 1);
  CHECK(d.micro_batches == 2);
  const Time layer = d.layers[0].forward + d.layers[0].backward;
  const Time one =
      Time::ps(layer.count_ps() * d.layers_per_stage[0]) + d.head_forward + d.head_backward;
  const Time expected =
      one + one + phase_duration(c, "optimizer") + work::TrainingStepJob::kDefaultStepOverhead;
  CHECK(c.summary.step == expected);
  CHECK(d.step_overhead == work::TrainingStepJob::kDefaultStepOverhead);
  CHECK(phase_duration(c, "dp_comm") == Time{});  // no data parallelism: nothing to sync
  CHECK(d.param_gather == Time{});
}

TEST_CASE("training step: the fixed cost per step adds its time once, folded, unfolded, DualPipe") {
  // A delay after each GPU's optimizer and parameter gather: the step grows by exactly it,
  // whatever the schedule, and the report's phase holds it once per simulated GPU.
  const auto grows = [](const std::string& file, std::vector<std::string> sets) {
    sets.emplace_back("workload.step_overhead_ms=0");
    const work::RunResult none = run_with(file, sets);
    sets.back() = "workload.step_overhead_ms=37.5";
    const work::RunResult some = run_with(file, sets);
    CHECK(some.cases[0].summary.step - none.cases[0].summary.step == Time::us(37'500));
    CHECK(none.cases[0].step()->step_overhead == Time{});
    CHECK(some.cases[0].step()->step_overhead == Time::us(37'500));
    CHECK(phase_duration(none.cases[0], "step_overhead") == Time{});
    return phase_duration(some.cases[0], "step_overhead");
  };
  SUBCASE("folded: one GPU per pipeline rank") {
    CHECK(grows(kSmall, {}) == Time::us(4 * 37'500));
  }
  SUBCASE("unfolded: every GPU") {
    CHECK(grows(kSmall, {"workload.fold=false"}) == Time::us(32 * 37'500));
  }
  SUBCASE("DualPipe") {
    CHECK(grows(kExperiments + "deepseek-v3-step.json",
                {"model.layers=4", "model.moe.first_dense_layers=1", "parallel.pp=2",
                 "parallel.dp=16", "parallel.ep=16", "workload.seq_len=1024",
                 "workload.global_batch=128"}) == Time::us(2 * 37'500));
  }
  CHECK(error_of(kSmall, {"workload.step_overhead_ms=-1"}).find("/workload/step_overhead_ms") !=
        std::string::npos);
}

TEST_CASE("training step: the head is its kernels, the loss's implementation moves only it") {
  const std::vector<std::string> small{"parallel.tp=4",
                                       "parallel.pp=1",
                                       "parallel.dp=1",
                                       "workload.global_batch=2",
                                       "workload.schedule=\"1f1b\"",
                                       "workload.virtual_stages=1"};
  const work::RunResult unfused = run_with(kSmall, small);
  std::vector<std::string> online_sets = small;
  online_sets.emplace_back("workload.cross_entropy=\"online\"");
  const work::RunResult online = run_with(kSmall, online_sets);
  const work::StepDetails& u = *unfused.cases[0].step();
  const work::StepDetails& o = *online.cases[0].step();
  Time fwd;
  for (const auto& [name, cost] : u.head.fwd) {
    fwd += cost.time;
  }
  CHECK(u.head_forward == fwd);
  REQUIRE(u.head.fwd.size() == 3);
  CHECK(u.head.fwd[2].second.kind == work::KernelClass::CrossEntropy);
  // Two micro-batches, pp 1: the step shrinks by the loss's two passes, twice, exactly.
  const Time saved = u.head.fwd[2].second.time + u.head.bwd[3].second.time -
                     o.head.fwd[2].second.time - o.head.bwd[3].second.time;
  CHECK(saved > Time{});
  CHECK(unfused.cases[0].summary.step - online.cases[0].summary.step == 2 * saved);
  // The report's kernel classes count the loss.
  CHECK(unfused.cases[0].summary.compute_kernels.time(work::KernelClass::CrossEntropy) >
        online.cases[0].summary.compute_kernels.time(work::KernelClass::CrossEntropy));
  CHECK(online.cases[0].summary.compute_kernels.time(work::KernelClass::CrossEntropy) > Time{});
  CHECK(error_of(kSmall, {"workload.cross_entropy=\"liger\""}).find("/workload/cross_entropy") !=
        std::string::npos);
}

TEST_CASE("training step: activation offload keeps one layer on the GPU and waits out copies") {
  const std::vector<std::string> small{"parallel.tp=4",
                                       "parallel.pp=1",
                                       "parallel.dp=1",
                                       "workload.global_batch=2",
                                       "workload.schedule=\"1f1b\"",
                                       "workload.virtual_stages=1"};
  const auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), small.begin(), small.end());
    return run_with(kSmall, extra);
  };
  const work::RunResult none = with({});
  const work::RunResult one = with({"workload.cpu_offload_layers=1"});
  const work::RunResult fast =
      with({"workload.cpu_offload_layers=16", "cluster.gpu.host_GBps=1e4"});
  const work::RunResult slow = with({"workload.cpu_offload_layers=16", "cluster.gpu.host_GBps=2"});
  const auto activations = [](const work::RunResult& r) {
    return r.cases[0].step()->memory[0].activations;
  };
  // One layer offloaded is the one on the GPU while it is copied: nothing saved.
  CHECK(activations(one) == activations(none));
  // Sixteen: fifteen layers' activations leave the GPU, each its copy time x the host link.
  const work::StepDetails& s = *slow.cases[0].step();
  REQUIRE(s.offload_copy.size() == 16);
  const double layer = s.offload_copy[0].seconds() * 2e9;
  CHECK(activations(none) - activations(slow) == hopsim::test::approx(15 * layer).epsilon(1e-6));
  CHECK(activations(fast) == activations(slow));
  // Copies shorter than the next layer's compute hide; longer ones add their excess, per
  // micro-batch (two, pp 1: the step is their passes in a row).
  CHECK(fast.cases[0].summary.step == none.cases[0].summary.step);
  Time waits;
  for (std::size_t l = 0; l < 16; ++l) {
    CHECK(s.offload_wait_forward[l] == s.offload_copy[l] - s.layers[0].forward);
    waits += s.offload_wait_forward[l] + s.offload_wait_backward[l];
  }
  CHECK(slow.cases[0].summary.step - none.cases[0].summary.step == 2 * waits);
  // Megatron's limits, each a clear error.
  const auto problem = [&](const std::vector<std::string>& sets) { return error_of(kSmall, sets); };
  CHECK(problem({"workload.cpu_offload_layers=4"}).find("pp 1 only") != std::string::npos);
  std::vector<std::string> bad = small;
  bad.emplace_back("workload.cpu_offload_layers=32");
  CHECK(problem(bad).find("/workload/cpu_offload_layers: 32 layers offloaded of the model's 32") !=
        std::string::npos);
  bad.back() = "workload.cpu_offload_layers=4";
  bad.emplace_back("workload.recompute=\"full\"");
  CHECK(problem(bad).find("recomputation") != std::string::npos);
  bad.back() = "workload.fold=false";
  CHECK(problem(bad).find("/workload/fold: activation offload is simulated folded only") !=
        std::string::npos);
}

TEST_CASE("training step: the folded layers equal the same layers chained on the mesh") {
  // The step runs one layer and repeats its time; transformer_layer chains every layer on
  // every GPU. Without a pipeline and DP they agree within 0.1%.
  const work::RunResult step = run_with(
      kSmall, {"parallel.tp=4", "parallel.pp=1", "parallel.dp=1", "workload.global_batch=1",
               "workload.schedule=\"1f1b\"", "workload.virtual_stages=1"});
  const work::StepDetails& d = *step.cases[0].step();
  const Time folded = step.cases[0].summary.step - d.head_forward - d.head_backward -
                      phase_duration(step.cases[0], "optimizer") - d.step_overhead;
  const work::RunResult chained = run_with(
      kSmall, {"parallel.tp=4", "parallel.pp=1", "parallel.dp=1",
               "workload={\"kind\": \"transformer_layer\", \"seq_len\": 8192, \"layers\": 32}"});
  const double a = folded.seconds();
  const double b = chained.cases[0].summary.step.seconds();
  CHECK(a == hopsim::test::approx(b).epsilon(1e-3));
}

TEST_CASE("training step: folded equals unfolded within 1%, its bytes exactly, dense and MoE") {
  // Unfolded, every GPU runs every layer, activation transfer and gradient collective in one
  // plan; folded, one layer group, one stage's DP groups and one GPU per stage stand for all.
  const auto both = [](const std::string& file, const std::vector<std::string>& sets) {
    std::vector<std::string> unfolded = sets;
    unfolded.emplace_back("workload.fold=false");
    const work::RunResult a = run_with(file, sets);
    const work::RunResult b = run_with(file, unfolded);
    CHECK(a.cases[0].step()->folding.find("folded") != std::string::npos);
    CHECK(b.cases[0].step()->folding.find("unfolded: all 32 GPUs") != std::string::npos);
    CHECK(b.cases[0].plan.tasks().size() > 10 * a.cases[0].plan.tasks().size());
    // The folded step's bytes (its probes' counted as often as the step runs them, its plan
    // once per column) are the unfolded step's, to the byte: the same flows, the same routing.
    const work::Summary& fs = a.cases[0].summary;
    const work::Summary& us = b.cases[0].summary;
    CHECK(us.nvlink_bytes.n > 0);
    CHECK(fs.nvlink_bytes == us.nvlink_bytes);
    CHECK(fs.ib_bytes == us.ib_bytes);
    return std::pair{fs.step.seconds(), us.step.seconds()};
  };
  SUBCASE("Llama 3 8B: TP 2, PP 4 interleaved, DP 4, ZeRO-1") {
    const auto [folded, unfolded] = both(kSmall, {});
    CHECK(folded == hopsim::test::approx(unfolded).epsilon(0.01));
  }
  const std::vector<std::string> moe = {"model.layers=4",
                                        "model.moe.first_dense_layers=1",
                                        "parallel.pp=2",
                                        "parallel.dp=16",
                                        "parallel.ep=16",
                                        "workload.seq_len=1024",
                                        "workload.global_batch=128",
                                        "workload.recompute=\"none\"",
                                        "workload.recompute_modules=null",
                                        "workload.schedule=\"1f1b\""};
  SUBCASE("DeepSeek-V3 cut to 4 layers (1 dense): PP 2, EP 16 in each stage, DP 16") {
    const auto [folded, unfolded] = both(kExperiments + "deepseek-v3-step.json", moe);
    CHECK(folded == hopsim::test::approx(unfolded).epsilon(0.01));
  }
  // ZeRO-3: unfolded, every op gathers each layer's parameters (real all-gathers, prefetched
  // one layer ahead) and every backward reduce-scatters its gradients, against the folded
  // ops' prefetch recurrence over the simulated gather and reduce-scatter times.
  SUBCASE("Llama 3 8B, CP 2 and full recomputation") {
    const auto [folded, unfolded] =
        both(kSmall, {"parallel.cp=2", "parallel.dp=2", "workload.recompute=\"full\""});
    CHECK(folded == hopsim::test::approx(unfolded).epsilon(0.01));
  }
  SUBCASE("Llama 3 8B, full recomputation of each stage's first layer (block), ZeRO-3") {
    const auto [folded, unfolded] = both(
        kSmall,
        {"workload.recompute=\"full\"", "workload.recompute_method=\"block\"", "workload.zero=3"});
    CHECK(folded == hopsim::test::approx(unfolded).epsilon(0.01));
  }
  SUBCASE("Llama 3 8B, ZeRO-3") {
    const auto [folded, unfolded] = both(kSmall, {"workload.zero=3"});
    CHECK(folded == hopsim::test::approx(unfolded).epsilon(0.01));
  }
  SUBCASE("DeepSeek-V3 cut to 4 layers, ZeRO-3") {
    std::vector<std::string> sets = moe;
    sets.emplace_back("workload.zero=3");
    // Without the MTP block, which would give stage 0 a third layer: with three MoE layers
    // per stage the ZeRO-3 fold runs 6.8% short of the unfolded step (462.0 against 495.6 ms),
    // a gap of its own (docs/training-step.md, "Not yet").
    sets.emplace_back("model.mtp_depth=0");
    const auto [folded, unfolded] = both(kExperiments + "deepseek-v3-step.json", sets);
    // 3%, not 1%: the fold's backward charges each layer's gather with one reduce-scatter in
    // series where the unfolded step shares the links between them, and the head's large
    // reduce-scatter in the last backward shares links with that backward's gathers, which
    // folding, where it is a bucket on the DP stream, does not see (365.8 against 372.2 ms,
    // -1.70%).
    CHECK(folded == hopsim::test::approx(unfolded).epsilon(0.03));
  }
}

TEST_CASE("training step: DualPipe holds two stages per rank and hides EP under pairs") {
  // DeepSeek-V3 cut to 8 layers (1 dense) on 4 pipeline ranks of EP 16: DualPipe's rank r holds
  // stages r and 3 - r, so twice 1F1B's parameters; its overlapped pairs make the step shorter
  // (at 16 micro-batches: with 8, the larger gradient syncs of two stages per rank cost more).
  const std::vector<std::string> small = {"model.layers=8",
                                          "model.moe.first_dense_layers=1",
                                          "parallel.pp=4",
                                          "parallel.dp=16",
                                          "parallel.ep=16",
                                          "workload.seq_len=1024",
                                          "workload.global_batch=256",
                                          "workload.recompute=\"none\"",
                                          "workload.recompute_modules=null",
                                          "workload.moe.chunk_tokens=128"};
  std::vector<std::string> dual = small;
  dual.emplace_back("workload.schedule=\"dualpipe\"");
  std::vector<std::string> one = small;
  one.emplace_back("workload.schedule=\"1f1b\"");
  const std::string file = kExperiments + "deepseek-v3-step.json";
  const work::RunResult d = run_with(file, dual);
  const work::RunResult o = run_with(file, one);
  const work::StepDetails& dd = *d.cases[0].step();
  const work::StepDetails& od = *o.cases[0].step();
  CHECK(dd.schedule == "dualpipe");
  CHECK(d.cases[0].outcome.stuck.empty());
  for (int r = 0; r < 4; ++r) {
    CHECK(dd.memory[static_cast<std::size_t>(r)].params ==
          hopsim::test::approx(od.memory[static_cast<std::size_t>(r)].params +
                               od.memory[static_cast<std::size_t>(3 - r)].params));
    CHECK(dd.rank_layers[static_cast<std::size_t>(r)] ==
          od.rank_layers[static_cast<std::size_t>(r)] +
              od.rank_layers[static_cast<std::size_t>(3 - r)]);
  }
  // The MoE layer's simulated pair beats its forward plus backward.
  REQUIRE(dd.layers.size() == 2);
  CHECK(dd.layers[1].moe);
  CHECK(dd.layers[1].pair < dd.layers[1].forward + dd.layers[1].backward);
  CHECK(dd.layers[0].pair == dd.layers[0].forward + dd.layers[0].backward);
  CHECK(dd.layers[1].weight > Time{});
  CHECK(dd.layers[1].weight < dd.layers[1].backward);
  CHECK(d.cases[0].summary.step < o.cases[0].summary.step);
  // DualPipe needs an even pp and micro-batches from both ends (its unfolded check: the
  // schedule-by-source test below).
  CHECK(error_of(file,
                 {"workload.schedule=\"dualpipe\"", "parallel.pp=8", "workload.global_batch=1024"})
            .find("even number") != std::string::npos);
}

TEST_CASE("training step: gradients sync bucket by bucket, ZeRO-1 adds the parameter gather") {
  const work::RunResult zero1 = run_with(kSmall, {});
  const work::RunResult zero0 = run_with(kSmall, {"workload.zero=0"});
  const work::StepDetails& d1 = *zero1.cases[0].step();
  const work::StepDetails& d0 = *zero0.cases[0].step();
  // The same gradient bytes per layer; a reduce-scatter takes about half an all-reduce.
  REQUIRE(d1.grad_sync.size() == 1);
  CHECK(d1.grad_sync[0].bytes_per_gpu == d0.grad_sync[0].bytes_per_gpu);
  CHECK(d1.grad_sync[0].time < d0.grad_sync[0].time);
  CHECK(d1.param_gather > Time{});
  CHECK(d0.param_gather == Time{});
  // ZeRO-1's optimizer states are a DP share of ZeRO-0's.
  CHECK(d1.memory[1].optimizer == hopsim::test::approx(d0.memory[1].optimizer / 4));
  // Every layer's bucket: 8 layers of each of the 2 chunks on a middle rank, one held
  // communication each, on the rank's DP stream.
  std::size_t buckets = 0;
  const work::Plan& plan = zero1.cases[0].plan;
  for (const work::PlanTask& t : plan.tasks()) {
    buckets += t.kind == work::PlanTaskKind::Hold && t.src == d1.representatives[1] &&
               plan.phases()[t.phase].name() == "dp_comm" && plan.streams()[t.stream] == "dp";
  }
  CHECK(buckets == static_cast<std::size_t>(d1.rank_layers[1]));
}

TEST_CASE("training step: ZeRO-1 moves plain DP's gradient bytes, reduce-scatter + all-gather") {
  // Unfolded, every gradient and parameter flow is in the plan: a ring all-reduce sends
  // 2 (n - 1) / n of the buffer per rank, a reduce-scatter and an all-gather (n - 1) / n each.
  const auto bytes = [](const work::RunResult& r, const std::string& phase) {
    std::int64_t total = 0;
    for (const work::PlanTask& t : r.cases[0].plan.tasks()) {
      if (t.kind == work::PlanTaskKind::Flow && r.cases[0].plan.phases()[t.phase].name() == phase) {
        total += t.bytes.n;
      }
    }
    return total;
  };
  const std::vector<std::string> sets = {"workload.fold=false", "workload.grad_dtype=\"bf16\""};
  std::vector<std::string> zero0 = sets;
  zero0.emplace_back("workload.zero=0");
  const work::RunResult one = run_with(kSmall, sets);
  const work::RunResult none = run_with(kSmall, zero0);
  CHECK(bytes(none, "param_gather") == 0);
  CHECK(bytes(one, "param_gather") > 0);
  const double ratio = static_cast<double>(bytes(one, "dp_comm") + bytes(one, "param_gather")) /
                       static_cast<double>(bytes(none, "dp_comm"));
  CHECK(ratio == hopsim::test::approx(1.0).epsilon(0.01));  // ring pieces round up per rank
}

TEST_CASE("training step: ZeRO-3 gathers each layer twice per micro-batch, reduces it once") {
  // Unfolded, BF16 gradients: a ring reduce-scatter and all-gather of one buffer move the same
  // bytes. ZeRO-1 moves every parameter's (layers L, vocabulary V) once each way per step;
  // ZeRO-3 gathers the layers before every forward and backward of each of m micro-batches
  // and reduces them after every backward, the vocabulary once: gather 2 m L + V, reduce
  // m L + V.
  const auto bytes = [](const work::RunResult& r, const std::string& phase) {
    double total = 0;
    for (const work::PlanTask& t : r.cases[0].plan.tasks()) {
      if (t.kind == work::PlanTaskKind::Flow && r.cases[0].plan.phases()[t.phase].name() == phase) {
        total += static_cast<double>(t.bytes.n);
      }
    }
    return total;
  };
  const std::vector<std::string> sets = {"workload.fold=false", "workload.grad_dtype=\"bf16\""};
  std::vector<std::string> three = sets;
  three.emplace_back("workload.zero=3");
  const work::RunResult one = run_with(kSmall, sets);
  const work::RunResult z3 = run_with(kSmall, three);
  const auto m = static_cast<double>(z3.cases[0].step()->micro_batches);
  const double gathered = bytes(z3, "param_gather");
  const double reduced = bytes(z3, "dp_comm");
  const double layers = (gathered - reduced) / m;  // L
  const double all = bytes(one, "dp_comm");        // L + V
  CHECK(bytes(one, "param_gather") == hopsim::test::approx(all).epsilon(0.01));
  CHECK(reduced == hopsim::test::approx(m * layers + (all - layers)).epsilon(0.01));
  // L's share of L + V is the model's: its layers against its embedding and head.
  const ExperimentFile f = load_experiment(kSmall, {});
  const auto& job = std::get<work::TrainingStepJob>(f.experiment.job);
  const work::Mesh mesh(f.experiment.parallel);
  const work::JobEnv env{f.experiment.cluster, f.experiment.nccl, mesh,
                         &*f.experiment.model, f.experiment.seed, nullptr};
  const work::StepShape shape = job.shape(env);
  double layer_params = 0;
  double every_param = 0;
  const std::vector<work::StageParams> stages = work::stage_params(shape);
  for (int s = 0; s < static_cast<int>(stages.size()); ++s) {
    every_param += stages[static_cast<std::size_t>(s)].dense;
    layer_params += stages[static_cast<std::size_t>(s)].dense - work::vocab_params(shape, s);
  }
  CHECK(layers / all == hopsim::test::approx(layer_params / every_param).epsilon(0.01));
}

TEST_CASE("training step: ZeRO-3 memory holds shards and the layers in use") {
  // Llama 3 8B, TP 2, PP 4 x 2 chunks, DP 4: a middle rank holds 8 layers and no vocabulary.
  const ExperimentFile f = load_experiment(kSmall, {});
  const work::Mesh mesh(f.experiment.parallel);
  const work::JobEnv env{f.experiment.cluster, f.experiment.nccl, mesh,
                         &*f.experiment.model, f.experiment.seed, nullptr};
  work::TrainingStepJob job = std::get<work::TrainingStepJob>(f.experiment.job);
  const std::vector<work::StageMemory> one = work::stage_memory(job.shape(env));
  job.zero = 3;
  const std::vector<work::StageMemory> three = work::stage_memory(job.shape(env));
  const double layer =
      work::layer_params_per_gpu(*f.experiment.model, f.experiment.parallel, false).dense;
  CHECK(one[1].params == hopsim::test::approx(2 * 8 * layer));
  // BF16 weights: the DP shard of 8 layers, the layer computing and the one prefetched.
  CHECK(three[1].params == hopsim::test::approx(2 * (8 * layer / 4 + 2 * layer)));
  // Gradients: the shard and one layer's whole gradient before its reduce-scatter.
  CHECK(three[1].grads == hopsim::test::approx(job.grad_bytes * (8 * layer / 4 + layer)));
  CHECK(three[1].optimizer == hopsim::test::approx(one[1].optimizer));
  CHECK(three[1].activations == hopsim::test::approx(one[1].activations));
  CHECK(three[1].total() < one[1].total());
  // The first and last ranks also hold the embedding or the head whole (stages 0 and 7 of 8).
  const work::StepShape shape = job.shape(env);
  for (const int r : {0, 3}) {
    const double vocab = work::vocab_params(shape, r) + work::vocab_params(shape, r + 4);
    CHECK(vocab > 0);
    CHECK(three[static_cast<std::size_t>(r)].params ==
          hopsim::test::approx(2 * (vocab + 8 * layer / 4 + 2 * layer)));
    CHECK(three[static_cast<std::size_t>(r)].grads ==
          hopsim::test::approx(job.grad_bytes * (vocab + 8 * layer / 4 + layer)));
  }
}

TEST_CASE("training step: selective recomputation, module by module") {
  const ExperimentFile f = load_experiment(kExperiments + "llama3-405b-8k-16384gpu.json", {});
  const work::ModelSpec& m = *f.experiment.model;
  const double h = static_cast<double>(m.hidden);
  using work::RecomputeModule;
  const auto saved = [&](std::uint8_t mods) { return work::layer_saved_elements(m, false, mods); };
  // Llama 3 405B: 2 h norm inputs, 2 h norm outputs, Q 1 h, K and V 0.125 h, the attention
  // output 1 h, gate, up and SwiGLU outputs 3 x 3.25 h.
  CHECK(saved(0) == hopsim::test::approx(15.875 * h));
  CHECK(saved(static_cast<std::uint8_t>(RecomputeModule::CoreAttn)) == saved(0));
  CHECK(saved(static_cast<std::uint8_t>(RecomputeModule::LayerNorm)) ==
        hopsim::test::approx(13.875 * h));
  CHECK(saved(static_cast<std::uint8_t>(RecomputeModule::Mlp)) == hopsim::test::approx(6.125 * h));
  const ExperimentFile ds = load_experiment(kExperiments + "deepseek-v3-step.json", {});
  const work::ModelSpec& dm = *ds.experiment.model;
  const double up = static_cast<double>(dm.heads * (192 + 128 + 64 + 128));
  CHECK(work::layer_saved_elements(dm, true, 0) -
            work::layer_saved_elements(dm, true,
                                       static_cast<std::uint8_t>(RecomputeModule::MlaUpProj)) ==
        hopsim::test::approx(up));
  CHECK(work::layer_saved_elements(dm, true, 0) -
            work::layer_saved_elements(dm, true,
                                       static_cast<std::uint8_t>(RecomputeModule::MoeAct)) ==
        hopsim::test::approx(static_cast<double>((dm.moe.top_k + dm.moe.shared_experts) *
                                                 dm.moe.expert_ffn_hidden)));

  // In the step: layernorm recompute takes 2 h per token and layer off the peak and adds the
  // norms' forward before each backward; core_attn keeps the memory and adds attention.
  const auto step_of = [&](std::vector<std::string> sets) {
    sets.insert(sets.begin(), {"workload.schedule=\"1f1b\"", "workload.virtual_stages=1"});
    return *run_with(kExperiments + "llama3-405b-8k-16384gpu.json", sets).cases[0].step();
  };
  const work::StepDetails none =
      step_of({"workload.recompute=\"none\"", "workload.recompute_modules=null"});
  const work::StepDetails norm =
      step_of({"workload.recompute=\"selective\"", "workload.recompute_modules=[\"layernorm\"]"});
  const work::StepDetails attn =
      step_of({"workload.recompute=\"selective\"", "workload.recompute_modules=[\"core_attn\"]"});
  CHECK(norm.recompute == "selective (layernorm)");
  CHECK(attn.recompute == "selective (core_attn)");
  const work::LayerTiming& n0 = none.layers.front();
  const work::LayerTiming& n1 = norm.layers.front();
  const work::LayerTiming& a1 = attn.layers.front();
  CHECK(n0.recomputed == Time{});
  CHECK(n1.recomputed > Time{});
  CHECK(n1.backward == n0.backward + n1.recomputed);
  CHECK(n1.recomputed.count_ps() * n1.gpus ==
        hopsim::test::approx(
            static_cast<double>(n1.forward_kernels.time(work::KernelClass::Norm).count_ps())));
  CHECK(a1.recomputed.count_ps() * a1.gpus ==
        hopsim::test::approx(static_cast<double>(
            a1.forward_kernels.time(work::KernelClass::AttentionFwd).count_ps())));
  const auto peak = [](const work::StepDetails& d) {
    double most = 0;
    for (const work::StageMemory& mem : d.memory) {
      most = std::max(most, mem.activations);
    }
    return most;
  };
  // Rank 1: 8 layers x 15 micro-batches in flight, 1,024 tokens each, 2 h bytes saved less.
  CHECK(peak(none) - peak(norm) == hopsim::test::approx(8.0 * 15 * 1024 * 2 * 2 * h));
  CHECK(peak(attn) == peak(none));

  // FP8 caching halves what only GEMMs and SwiGLU read back: on DeepSeek-V3's MoE layer with
  // its own recomputation, the latents, the shared and routed experts' inputs and gate and up
  // outputs; the norms' inputs, the attention output stay BF16 (Q, K, V are recomputed).
  const std::uint8_t ds_mods = static_cast<std::uint8_t>(RecomputeModule::LayerNorm) |
                               static_cast<std::uint8_t>(RecomputeModule::MlaUpProj) |
                               static_cast<std::uint8_t>(RecomputeModule::MoeAct);
  const work::SavedElements ds_saved = work::layer_saved(dm, true, ds_mods);
  const double dh = static_cast<double>(dm.hidden);
  const double fe = static_cast<double>(dm.moe.expert_ffn_hidden);
  CHECK(ds_saved.other == hopsim::test::approx(2 * dh + static_cast<double>(dm.heads * 128)));
  CHECK(ds_saved.gemm_inputs == hopsim::test::approx(1536 + 512 + 64 + 2 * fe + 8 * (dh + 2 * fe)));
  // The experiment fits 80 GB with FP8 caching and not without (the error names the parts).
  const work::RunResult fp8 = run_with(kExperiments + "deepseek-v3-step.json", {});
  CHECK(fp8.cases[0].step()->recompute == "selective (layernorm, moe_act, mla_up_proj)");
  // mla_up_proj runs the up-projections again and what reads their outputs: rotary and MLA's
  // layout copies (layernorm every norm, MLA's latent ones too; moe_act the SwiGLUs).
  for (const work::LayerTiming& t : fp8.cases[0].step()->layers) {
    const auto fwd = [&](work::KernelClass k) {
      return static_cast<double>(t.forward_kernels.time(k).count_ps());
    };
    // The up-projections' share of the forward GEMMs is their share of the GEMMs' parameters.
    const work::LayerParams lp = work::layer_params(dm, t.moe);
    const double up_params = 1536.0 * 128 * (128 + 64) + 512.0 * 128 * (128 + 128);
    const double share = fwd(work::KernelClass::GemmFprop) * up_params /
                         (lp.attention + lp.mlp + lp.router + lp.shared_experts);
    const double again = static_cast<double>(t.recomputed.count_ps()) * t.gpus;
    CHECK(fwd(work::KernelClass::Copy) > 0);
    CHECK(again ==
          hopsim::test::approx(fwd(work::KernelClass::Norm) +
                               (t.moe ? fwd(work::KernelClass::SwiGlu) : 0.0) + share +
                               fwd(work::KernelClass::Rotary) + fwd(work::KernelClass::Copy))
              .epsilon(1e-6));
  }
  double fp8_peak = 0;
  for (const work::StageMemory& mem : fp8.cases[0].step()->memory) {
    fp8_peak = std::max(fp8_peak, mem.activations);
  }
  const std::string bf16 =
      error_of(kExperiments + "deepseek-v3-step.json", {"workload.activation_dtype=\"bf16\""});
  const std::size_t at = bf16.find("activations ");
  REQUIRE(at != std::string::npos);
  const double bf16_peak = std::stod(bf16.substr(at + 12)) * 1e9;
  CHECK(bf16_peak > 1.5 * fp8_peak);

  CHECK(error_of(kSmall, {"workload.recompute_modules=[\"layernorm\"]"})
            .find("recompute_modules are what selective recomputation runs again") !=
        std::string::npos);
  CHECK(error_of(kSmall,
                 {"workload.recompute=\"selective\"", "workload.recompute_modules=[\"attention\"]"})
            .find("/workload/recompute_modules/0") != std::string::npos);
  CHECK(error_of(kSmall, {"workload.recompute=\"selective\"", "workload.recompute_modules=[]"})
            .find("at least one module") != std::string::npos);
  CHECK(error_of(kSmall, {"workload.schedule=\"1f1b\"", "workload.virtual_stages=1",
                          "workload.microbatch_group=2"})
            .find("no micro-batch groups") != std::string::npos);
  CHECK(error_of(kSmall, {"workload.microbatch_group=2"}) == "no error");
}

TEST_CASE("training step: schedule auto keeps the fastest schedule that fits") {
  // The 8B step: every candidate fits; the kept one is the fastest simulated.
  const work::RunResult small =
      run_with(kSmall, {"workload.schedule=\"auto\"", "workload.virtual_stages=null"});
  const work::StepDetails& d = *small.cases[0].step();
  // 1f1b, interleaved x2 .. x8, zb-h1, dualpipe, dualpipev: the schedule table's order.
  REQUIRE(d.schedules_tried.size() == 11);
  CHECK(d.schedules_tried.front().schedule == "1f1b");
  CHECK(d.schedules_tried[8].schedule == "zb-h1");
  CHECK(d.schedules_tried.back().schedule == "dualpipev");
  double fastest = 1e300;
  std::string name;
  for (const work::ScheduleTried& t : d.schedules_tried) {
    CHECK(t.rejected.empty());
    if (t.step_s < fastest) {
      fastest = t.step_s;
      name = t.schedule;
    }
  }
  CHECK(small.cases[0].outcome.makespan.seconds() == fastest);
  CHECK(name.starts_with(d.schedule));
  // The same schedule named: the same step.
  const work::RunResult same =
      run_with(kSmall, {"workload.schedule=\"dualpipe\"", "workload.virtual_stages=1"});
  CHECK(name == "dualpipe");
  CHECK(same.cases[0].outcome.makespan == small.cases[0].outcome.makespan);

  // 405B on 8,192 GPUs: only 1F1B and ZB-H1 (1F1B's memory) fit 80 GB, and ZB-H1's smaller
  // bubble wins; the others are rejected, each with its reason.
  const work::RunResult big =
      run_with(kExperiments + "llama3-405b-8k-8192gpu.json", {"workload.schedule=\"auto\""});
  const work::StepDetails& b = *big.cases[0].step();
  CHECK(b.schedule == "zb-h1");
  for (const work::ScheduleTried& t : b.schedules_tried) {
    CHECK((t.schedule == "1f1b" || t.schedule == "zb-h1") == t.rejected.empty());
    if (!t.rejected.empty()) {
      CHECK(t.rejected.find("does not fit in memory") != std::string::npos);
    }
  }
  // Nothing fits: one error that names every candidate.
  const std::string none = error_of(kExperiments + "llama3-405b-8k-8192gpu.json",
                                    {"workload.schedule=\"auto\"", "cluster.gpu.hbm_GB=40"});
  CHECK(none.find("/workload/schedule: no schedule runs this step: 1f1b: /parallel: does not "
                  "fit in memory") != std::string::npos);
  CHECK(none.find("dualpipe: ") != std::string::npos);
  CHECK(error_of(kSmall, {"workload.schedule=\"auto\""}).find("remove virtual_stages") !=
        std::string::npos);
}

TEST_CASE("training step: layouts that cannot run are clear errors") {
  const std::string big = kExperiments + "llama3-405b-8k-8192gpu.json";
  const std::string memory =
      error_of(big, {"workload.schedule=\"interleaved\"", "workload.virtual_stages=2"});
  CHECK(memory.find("/parallel") != std::string::npos);
  CHECK(memory.find("does not fit in memory: pipeline rank") != std::string::npos);
  CHECK(memory.find("recompute full") != std::string::npos);
  CHECK(error_of(big, {"workload.schedule=\"interleaved\"", "workload.virtual_stages=2",
                       "workload.recompute=\"full\""}) == "no error");
  CHECK(error_of(kSmall, {"workload.global_batch=30"}).find("/workload/global_batch") !=
        std::string::npos);
  CHECK(error_of(kSmall, {"workload.zero=2"}).find("/workload/zero") != std::string::npos);
  CHECK(error_of(kSmall, {"workload.zero=3"}) == "no error");
  CHECK(error_of(kExperiments + "deepseek-v3-step.json", {"workload.zero=3"})
            .find("zero 3 is not simulated under dualpipe") != std::string::npos);
  CHECK(error_of(kSmall, {"workload.global_batch=8"}).find("multiple") != std::string::npos);
  CHECK(error_of(kSmall, {"workload.layers=2"}).find("layers") != std::string::npos);
}

TEST_CASE("training step: stage_layers sets the split by hand") {
  // Llama 3 8B: 32 layers over pp 4 x 2 chunks = 8 model stages, 4 each by default.
  const auto step = [](const std::vector<std::string>& sets) {
    const work::RunResult r = run_with(kSmall, sets);
    REQUIRE(r.cases[0].step() != nullptr);
    return std::pair{r.cases[0].step()->layers_per_stage, r.cases[0].summary.step};
  };
  const auto [even, even_time] = step({});
  CHECK(even == std::vector<std::int64_t>(8, 4));
  // The even split written out is the default, to the picosecond.
  CHECK(step({"workload.stage_layers=[4, 4, 4, 4, 4, 4, 4, 4]"}).second == even_time);
  // Two layers moved off the last stage, whose output layer (a 128,256-token loss, unfused)
  // outweighs them, onto the first: the split is the one given, and the step is shorter
  // (1.055 -> 0.979 s); moved the other way it is longer (1.193 s).
  const auto [moved, moved_time] = step({"workload.stage_layers=[6, 4, 4, 4, 4, 4, 4, 2]"});
  CHECK(moved == std::vector<std::int64_t>{6, 4, 4, 4, 4, 4, 4, 2});
  CHECK(moved_time < even_time);
  CHECK(step({"workload.stage_layers=[2, 4, 4, 4, 4, 4, 4, 6]"}).second > even_time);
  // Unfolded, every GPU runs the split given: within 1% of the fold (0.982 s).
  const Time unfolded =
      step({"workload.stage_layers=[6, 4, 4, 4, 4, 4, 4, 2]", "workload.fold=false"}).second;
  CHECK(moved_time.seconds() == hopsim::test::approx(unfolded.seconds()).epsilon(0.01));
  for (const auto& [set, says] :
       {std::pair{"workload.stage_layers=[8, 8, 8, 8]", "4 entries for 8 model stages"},
        std::pair{"workload.stage_layers=[4, 4, 4, 4, 4, 4, 4, 5]", "sum to 33"},
        std::pair{"workload.stage_layers=[4, 4, 4, 4, 4, 4, 8, 0]", "/workload/stage_layers/7"},
        std::pair{"workload.stage_layers=[]", "one entry per model stage"}}) {
    CAPTURE(set);
    const std::string error = error_of(kSmall, {set});
    CHECK(error.find("/workload/stage_layers") != std::string::npos);
    CHECK(error.find(says) != std::string::npos);
  }
  // DeepSeek-V3 under DualPipe: 16 stages, 61 layers and the MTP block.
  CHECK(error_of(kExperiments + "deepseek-v3-step.json",
                 {"workload.stage_layers=[4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1]"})
            .find("has 62 layers (its MTP blocks included)") != std::string::npos);
}

TEST_CASE("training step: layers per stage, the first and last with fewer") {
  const std::vector<std::int64_t> llama = work::layers_per_stage(126, 16);
  CHECK(llama.front() == 7);
  CHECK(llama.back() == 7);
  CHECK(std::count(llama.begin(), llama.end(), 8) == 14);
  for (const auto& [layers, stages] :
       {std::pair{61, 16}, std::pair{32, 8}, std::pair{5, 5}, std::pair{9, 1}, std::pair{33, 2}}) {
    const std::vector<std::int64_t> split = work::layers_per_stage(layers, stages);
    CHECK(std::accumulate(split.begin(), split.end(), std::int64_t{0}) == layers);
    const auto [lo, hi] = std::minmax_element(split.begin(), split.end());
    CHECK(*hi - *lo <= 1);
  }
}

TEST_CASE("training step: activations in flight and parameters per stage, in closed form") {
  // Llama 3 405B, TP 8, PP 16, 1F1B: rank 0 holds 16 micro-batches of its 7 layers; a layer
  // keeps (8 h + 4 h + 4 kv d + 6 ffn) bytes per token, over 8192 / 8 tokens per GPU.
  const ExperimentFile f = load_experiment(kExperiments + "llama3-405b-8k-8192gpu.json", {});
  const auto& job = std::get<work::TrainingStepJob>(f.experiment.job);
  const work::Mesh mesh(f.experiment.parallel);
  const work::JobEnv env{f.experiment.cluster, f.experiment.nccl, mesh,
                         &*f.experiment.model, f.experiment.seed, nullptr};
  const std::vector<work::StageMemory> memory = work::stage_memory(job.shape(env));
  const double per_token = 8.0 * 16384 + 4.0 * 16384 + 4.0 * 8 * 128 + 6.0 * 53248;
  CHECK(memory[0].activations == hopsim::test::approx(16 * 7 * per_token * 1024));
  CHECK(memory[15].activations == hopsim::test::approx(1 * 7 * per_token * 1024));
  CHECK(memory[1].activations == hopsim::test::approx(15 * 8 * per_token * 1024));
  // Parameters per GPU (Megatron's count from the shapes): a layer's attention h (2 h + 2 kv d)
  // with GQA, SwiGLU 3 h ffn, two norms 2 h, split over TP 8; stage 0 adds the vocab-parallel
  // embedding, the last stage the head and the final norm. ZeRO-1: 12 bytes of optimizer state
  // per parameter over DP 64.
  const double layer = (16384.0 * (2 * 16384 + 2 * 8 * 128) + 3.0 * 16384 * 53248 + 2 * 16384) / 8;
  const double vocab = 128256.0 * 16384 / 8;
  CHECK(memory[1].params == hopsim::test::approx(2 * 8 * layer));
  CHECK(memory[0].params == hopsim::test::approx(2 * (7 * layer + vocab)));
  CHECK(memory[15].params == hopsim::test::approx(2 * (7 * layer + vocab + 16384)));
  CHECK(memory[1].optimizer == hopsim::test::approx(12 * 8 * layer / 64));
  CHECK(memory[1].params / 1e9 == hopsim::test::approx(6.38).epsilon(0.002));
  // The reserve: the CUDA context and one buffer set per communicator (TP, DP, PP); no FP8
  // GEMMs, so no FP8 weight copies.
  CHECK(work::communicators(job.shape(env)) == 3);
  CHECK(memory[1].reserve == hopsim::test::approx(0.4e9 + 3 * 0.69e9));
  CHECK(memory[1].fp8_weights == 0);
  // Full recompute keeps each layer's input and rebuilds one layer at a time.
  work::TrainingStepJob full = job;
  full.recompute.granularity = work::Recompute::Full;
  const std::vector<work::StageMemory> kept = work::stage_memory(full.shape(env));
  CHECK(kept[0].activations ==
        hopsim::test::approx(16 * 7 * 2.0 * 16384 * 1024 + per_token * 1024));
  // Uniform in groups of 2: rank 0's 7 layers keep 4 inputs ({0, 1}, {2, 3}, {4, 5}, {6}) and
  // rebuild 2 layers at once.
  full.recompute.layers = 2;
  CHECK(work::stage_memory(full.shape(env))[0].activations ==
        hopsim::test::approx(16 * 4 * 2.0 * 16384 * 1024 + 2 * per_token * 1024));
  // Block of 3: the first 3 layers keep their input and are rebuilt one at a time, the other
  // 4 keep everything.
  full.recompute.method = work::RecomputeMethod::Block;
  full.recompute.layers = 3;
  CHECK(work::stage_memory(full.shape(env))[0].activations ==
        hopsim::test::approx(16 * (3 * 2.0 * 16384 + 4 * per_token) * 1024 + per_token * 1024));
}

TEST_CASE("training step: DeepSeek-V3's MTP module runs on the last stage") {
  // 61 layers and one MTP block over 16 stages: 3, 14 of 4, 3; the block (index 61, MoE) is the
  // last stage's third, and that stage adds the module's projection (2 h x h) and three norms.
  const ExperimentFile f = load_experiment(kExperiments + "deepseek-v3-step.json", {});
  const auto& job = std::get<work::TrainingStepJob>(f.experiment.job);
  work::ModelSpec m = *f.experiment.model;
  REQUIRE(m.mtp_depth == 1);
  CHECK(work::trained_layers(m) == 62);
  CHECK(work::trained_moe_layers(m) == 59);
  const std::vector<std::int64_t> layers = work::layers_per_stage(work::trained_layers(m), 16);
  CHECK(layers.back() == 3);
  CHECK(work::is_moe_layer(m, work::first_layers(layers).back() + 2));
  const work::Mesh mesh(f.experiment.parallel);
  const auto params = [&](const work::ModelSpec& model) {
    const work::JobEnv env{
        f.experiment.cluster, f.experiment.nccl, mesh, &model, f.experiment.seed, nullptr};
    return work::stage_params(job.shape(env));
  };
  const std::vector<work::StageParams> with = params(m);
  m.mtp_depth = 0;
  const std::vector<work::StageParams> without = params(m);
  const work::StageParams moe = work::layer_params_per_gpu(m, f.experiment.parallel, true);
  const double h = 7168;
  // Without the block the last stage holds 3 of the model's layers, with it 2 and the block.
  CHECK(with.back().dense - without.back().dense ==
        hopsim::test::approx(2 * h * h + 3 * h).epsilon(1e-9));
  CHECK(with.back().expert == hopsim::test::approx(without.back().expert).epsilon(1e-12));
  CHECK(with[14].dense - without[14].dense == hopsim::test::approx(moe.dense).epsilon(1e-9));
  // The MTP module is not in the model's parameter count (DeepSeek's 671B leaves it out).
  CHECK(work::total_params(m) == work::total_params(*f.experiment.model));
  CHECK(
      error_of(kExperiments + "deepseek-v3-step.json", {"model.mtp_depth=-1"}).find("/mtp_depth") !=
      std::string::npos);
}

TEST_CASE("training step: FP8 expert weights keep a copy and its transpose") {
  // DeepSeek-V3 (PP 16 under DualPipe, EP 64, TP 1): rank 2 holds stages 2 and 13; every MoE
  // layer's routed experts over EP 64 and its shared expert are read by FP8 GEMMs, 2 bytes per
  // parameter; attention runs in BF16.
  const ExperimentFile f = load_experiment(kExperiments + "deepseek-v3-step.json", {});
  const auto& job = std::get<work::TrainingStepJob>(f.experiment.job);
  const work::ModelSpec& m = *f.experiment.model;
  const work::Mesh mesh(f.experiment.parallel);
  const work::JobEnv env{
      f.experiment.cluster, f.experiment.nccl, mesh, &m, f.experiment.seed, nullptr};
  const std::vector<std::int64_t> layers = work::layers_per_stage(work::trained_layers(m), 16);
  const std::vector<std::int64_t> first = work::first_layers(layers);
  const work::LayerParams lp = work::layer_params(m, true);
  double fp8 = 0;
  for (const int stage : {2, 13}) {
    for (std::int64_t l = 0; l < layers[static_cast<std::size_t>(stage)]; ++l) {
      if (work::is_moe_layer(m, first[static_cast<std::size_t>(stage)] + l)) {
        fp8 += lp.shared_experts + 256.0 * lp.expert / 64;
      }
    }
  }
  const std::vector<work::StageMemory> memory = work::stage_memory(job.shape(env));
  CHECK(memory[2].fp8_weights == hopsim::test::approx(2 * fp8));
  CHECK(memory[2].fp8_weights / 1e9 == hopsim::test::approx(3.52).epsilon(0.01));
  // DP (dp x cp), PP, EP and expert DP (tp x cp x dp / ep = 2).
  CHECK(work::communicators(job.shape(env)) == 4);
  // Adam's moments in BF16 (DeepSeek-V3's): 8 bytes of optimizer state per parameter, not 12.
  CHECK(job.moment_bytes == 2);
  work::TrainingStepJob fp32 = job;
  fp32.moment_bytes = 4;
  CHECK(work::stage_memory(fp32.shape(env))[2].optimizer ==
        hopsim::test::approx(memory[2].optimizer * 12 / 8));
}

TEST_CASE("training step: full recomputation by method and number of layers") {
  // Llama 3 8B on 32 GPUs: 8 model stages (PP 4 x 2 chunks) of 4 layers. Block over all 4
  // layers runs every forward again, as uniform does; block of 1 runs a quarter of them.
  struct Step {
    work::StepDetails details;
    Time time;
  };

  const auto step_of = [](const std::vector<std::string>& sets) {
    const work::RunResult r = run_with(kSmall, sets);
    return Step{*r.cases[0].step(), r.cases[0].summary.step};
  };
  const Step none = step_of({});
  const Step uniform = step_of({"workload.recompute=\"full\""});
  const Step all = step_of({"workload.recompute=\"full\"", "workload.recompute_method=\"block\"",
                            "workload.recompute_num_layers=4"});
  const Step one = step_of({"workload.recompute=\"full\"", "workload.recompute_method=\"block\""});
  CHECK(uniform.details.recompute == "full");
  CHECK(one.details.recompute == "full (block, 1 layer)");
  CHECK(all.details.recompute == "full (block, 4 layers)");
  CHECK(all.time == uniform.time);
  CHECK(one.time > none.time);
  CHECK(one.time < uniform.time);
  // Memory: block of 1 keeps 3 of 4 layers whole.
  const auto held = [](const Step& s) { return s.details.memory.front().activations; };
  CHECK(held(one) > held(uniform));
  CHECK(held(one) < held(none));
  CHECK(
      error_of(kSmall, {"workload.recompute_method=\"block\""}).find("set recompute to \"full\"") !=
      std::string::npos);
  CHECK(error_of(kSmall, {"workload.recompute=\"full\"", "workload.recompute_num_layers=5"})
            .find("/workload/recompute_num_layers: 5 layers per recomputation group: a model "
                  "stage holds at most 4") != std::string::npos);
}


TEST_CASE("training step: moe and shared_experts recompute what they drop, BF16 experts run") {
  using work::RecomputeModule;
  const auto bit = [](RecomputeModule m) { return static_cast<std::uint8_t>(m); };
  const ExperimentFile ds = load_experiment(kExperiments + "deepseek-v3-step.json", {});
  const work::ModelSpec& dm = *ds.experiment.model;
  const double h = static_cast<double>(dm.hidden);
  const double fe = static_cast<double>(dm.moe.expert_ffn_hidden);
  const double k = static_cast<double>(dm.moe.top_k);
  const double none = work::layer_saved_elements(dm, true, 0);
  // shared_experts drops the shared expert's gate, up and SwiGLU outputs; moe everything of
  // the MoE part but its input (the norm's output, which the layer keeps).
  CHECK(none - work::layer_saved_elements(dm, true, bit(RecomputeModule::SharedExperts)) ==
        hopsim::test::approx(3 * fe));
  CHECK(none - work::layer_saved_elements(dm, true, bit(RecomputeModule::Moe)) ==
        hopsim::test::approx(3 * fe + k * (h + 3 * fe)));
  CHECK(work::layer_saved_elements(dm, true, bit(RecomputeModule::Moe)) ==
        work::layer_saved_elements(dm, true, bit(RecomputeModule::Moe) |
                                                  bit(RecomputeModule::MoeAct)));
  // A dense layer has nothing of either.
  CHECK(work::layer_saved_elements(dm, false, bit(RecomputeModule::Moe)) ==
        work::layer_saved_elements(dm, false, 0));

  // In a step (DeepSeek-V3 cut to 4 layers, 1F1B, BF16 experts): moe recomputes the MoE part
  // (router, permutes, grouped GEMMs, SwiGLUs, the router's and shared expert's share of the
  // GEMMs, the exposed exchanges) and holds less than moe_act; shared_experts less than none.
  const auto step_with = [&](const std::string& modules) {
    return run_with(kExperiments + "deepseek-v3-step.json",
                    {"model.layers=4", "model.moe.first_dense_layers=1", "model.mtp_depth=0",
                     "parallel.pp=2", "parallel.dp=16", "parallel.ep=16",
                     "workload.seq_len=1024", "workload.global_batch=128",
                     "workload.schedule=\"1f1b\"", "workload.moe.expert_dtype=\"bf16\"",
                     "workload.recompute=\"selective\"",
                     "workload.recompute_modules=" + modules});
  };
  const work::RunResult act = step_with(R"(["moe_act"])");
  const work::RunResult whole = step_with(R"(["moe"])");
  const work::RunResult shared = step_with(R"(["shared_experts"])");
  const work::StepDetails& a = *act.cases[0].step();
  const work::StepDetails& w = *whole.cases[0].step();
  const work::StepDetails& s = *shared.cases[0].step();
  CHECK(w.recompute == "selective (moe)");
  const auto moe_layer = [](const work::StepDetails& d) {
    for (const work::LayerTiming& t : d.layers) {
      if (t.moe) {
        return t;
      }
    }
    FAIL("no MoE layer");
    return work::LayerTiming{};
  };
  const work::LayerTiming wt = moe_layer(w);
  const work::LayerTiming at = moe_layer(a);
  const work::LayerTiming st = moe_layer(s);
  using K = work::KernelClass;
  double classes = 0;
  for (const K c : {K::Router, K::Permute, K::GroupedFprop, K::SwiGlu}) {
    classes += static_cast<double>(wt.forward_kernels.time(c).count_ps());
  }
  const work::LayerParams lp = work::layer_params(dm, true);
  const double share = (lp.router + lp.shared_experts) /
                       (lp.attention + lp.mlp + lp.router + lp.shared_experts);
  const double gemms =
      static_cast<double>(wt.forward_kernels.time(K::GemmFprop).count_ps()) * share;
  CHECK(static_cast<double>((wt.recomputed - wt.ep_exposed_forward).count_ps()) ==
        hopsim::test::approx((classes + gemms) / wt.gpus).epsilon(1e-6));
  CHECK(wt.recomputed > at.recomputed);
  CHECK(st.recomputed > Time{});
  const auto peak = [](const work::StepDetails& d) {
    double most = 0;
    for (const work::StageMemory& mem : d.memory) {
      most = std::max(most, mem.activations);
    }
    return most;
  };
  CHECK(peak(w) < peak(a));
  const work::RunResult attn = step_with(R"(["core_attn"])");
  CHECK(peak(s) < peak(*attn.cases[0].step()));
}

TEST_CASE("training step: EP overlap pairs each steady backward with the next forward") {
  // Megatron's combined 1F1B over its interleaved order: each backward that a forward follows
  // runs as one pair with it; every forward and backward still runs once on its rank.
  const work::ScheduleRow* row = work::schedule_named("interleaved_ep_overlap");
  REQUIRE(row != nullptr);
  CHECK(row->pairs);
  const work::PipeShape shape{2, 4, 2, 0};
  const work::PipeOrder order = work::schedule_order(*row, shape);
  const work::PipeOrder base = work::schedule_order(*work::schedule_named("interleaved"), shape);
  for (std::size_t r = 0; r < order.size(); ++r) {
    int forwards = 0;
    int backwards = 0;
    int pairs = 0;
    for (const work::PipeOp& op : order[r]) {
      forwards += work::forward_of(op) ? 1 : 0;
      backwards += work::input_gradient_of(op) ? 1 : 0;
      pairs += op.work == work::OpWork::Pair ? 1 : 0;
    }
    CHECK(forwards == 8);
    CHECK(backwards == 8);
    CHECK(pairs > 0);
    CHECK(order[r].size() + static_cast<std::size_t>(pairs) == base[r].size());
  }
  // On a MoE step (DeepSeek-V3 cut to 4 layers, TP 1, BF16 experts) the pairs hide exchanges:
  // the step is faster, and a pair holds one layer's activations more than its backward's
  // micro-batch (it walks both micro-batches' layers in step), not a second micro-batch.
  const auto step_with = [&](const std::string& schedule) {
    return run_with(kExperiments + "deepseek-v3-step.json",
                    {"model.layers=4", "model.moe.first_dense_layers=1", "model.mtp_depth=0",
                     "parallel.pp=2", "parallel.dp=16", "parallel.ep=16",
                     "workload.seq_len=1024", "workload.global_batch=128",
                     "workload.virtual_stages=2", "workload.moe.expert_dtype=\"bf16\"",
                     "workload.schedule=\"" + schedule + "\""});
  };
  const work::RunResult plain = step_with("interleaved");
  const work::RunResult overlap = step_with("interleaved_ep_overlap");
  CHECK(overlap.cases[0].summary.step < plain.cases[0].summary.step);
  const auto peak = [](const work::RunResult& r) {
    double most = 0;
    for (const work::StageMemory& mem : r.cases[0].step()->memory) {
      most = std::max(most, mem.activations);
    }
    return most;
  };
  CHECK(peak(overlap) > peak(plain));
  CHECK(peak(overlap) - peak(plain) < peak(plain) / 4);  // a layer of a stage's 2, not a stage's
}

TEST_CASE("training step: 1f1b_ep_overlap pairs backwards with forwards at pp 1 only") {
  // Without a pipeline 1F1B runs F0 B0 F1 B1 ...: the overlap runs F0, then B0 with F1, ...,
  // then the last backward alone, so every micro-batch but the first forward is in a pair.
  const work::ScheduleRow* row = work::schedule_named("1f1b_ep_overlap");
  REQUIRE(row != nullptr);
  CHECK(row->pairs);
  const work::PipeOrder order = work::schedule_order(*row, work::PipeShape{1, 5, 1, 0});
  REQUIRE(order.size() == 1);
  REQUIRE(order[0].size() == 6);
  CHECK(order[0].front().work == work::OpWork::Forward);
  CHECK(order[0].back().work == work::OpWork::Backward);
  for (std::size_t i = 1; i + 1 < order[0].size(); ++i) {
    CHECK(order[0][i].work == work::OpWork::Pair);
  }
  const Problems refused = work::check_schedule(*row, work::PipeShape{2, 8, 1, 0}, "/w");
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].message.find("interleaved_ep_overlap") != std::string::npos);
  // A MoE step without a pipeline (DeepSeek-V3 cut to 4 layers, EP 16, BF16 experts) is
  // faster with the overlap; its pairs hold one layer's activations more than 1F1B's one
  // micro-batch (the largest of its 4 layers), not two micro-batches.
  const auto step_with = [&](const std::string& schedule) {
    return run_with(kExperiments + "deepseek-v3-step.json",
                    {"model.layers=4", "model.moe.first_dense_layers=1", "model.mtp_depth=0",
                     "parallel.pp=1", "parallel.dp=32", "parallel.ep=16",
                     "workload.seq_len=1024", "workload.global_batch=128",
                     "workload.moe.expert_dtype=\"bf16\"",
                     "workload.schedule=\"" + schedule + "\""});
  };
  const work::RunResult plain = step_with("1f1b");
  const work::RunResult overlap = step_with("1f1b_ep_overlap");
  REQUIRE(plain.ok());
  REQUIRE(overlap.ok());
  CHECK(overlap.cases[0].summary.step < plain.cases[0].summary.step);
  const double plain_held = plain.cases[0].step()->memory.at(0).activations;
  const double extra = overlap.cases[0].step()->memory.at(0).activations - plain_held;
  CHECK(extra > plain_held / 8);  // at least a mean layer's: the MoE layers are the larger
  CHECK(extra < plain_held / 2);  // one layer of 4
}
}  // namespace hopsim::config
