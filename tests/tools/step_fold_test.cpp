// The folded step's two halves on their own: what it declares as probes and reads back
// (run() counts them, any thread count gives the same step), and its assembly from a
// synthetic set of measurements, checked against closed forms with no probe simulated.
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::config {
namespace {

const std::string kExperiments = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/";
const std::string kSmall = kExperiments + "llama3-8b-step-32gpu.json";

// Durations of the plan's tasks with label `label`, in plan order.
std::vector<Time> durations(const work::Plan& plan, const work::Outcome& o,
                            const std::string& label) {
  std::vector<Time> out;
  for (std::size_t i = 0; i < plan.tasks().size(); ++i) {
    if (plan.label(plan.tasks()[i]) == label) {
      out.push_back(o.times[i].end - o.times[i].start);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("step fold: run() measures the declared probes, counted, on any number of threads") {
  const ExperimentFile f = load_experiment(kSmall, {});
  work::RunOptions one;
  one.probe_threads = 1;
  work::RunOptions three;
  three.probe_threads = 3;
  const work::RunResult a = work::run(f.experiment, one);
  const work::RunResult b = work::run(f.experiment, three);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  // Llama 3 8B (dense), ZeRO-1: the layer's forward and backward, then DP collectives.
  REQUIRE(a.probes.size() >= 4);
  CHECK(a.probes[0].name == "dense layer fwd");
  CHECK(a.probes[1].name == "dense layer bwd");
  REQUIRE(a.probes.size() == b.probes.size());
  for (std::size_t i = 0; i < a.probes.size(); ++i) {
    CHECK(a.probes[i].name == b.probes[i].name);
    CHECK(a.probes[i].outcome.makespan == b.probes[i].outcome.makespan);
    CHECK(a.probes[i].outcome.events > 0);
  }
  CHECK(a.cases.front().outcome.makespan == b.cases.front().outcome.makespan);
  // The step's layer timing is the probes' makespans (no recomputation here).
  const work::LayerTiming& layer = a.cases.front().step()->layers.front();
  CHECK(layer.forward == a.probes[0].outcome.makespan);
  CHECK(layer.backward == a.probes[1].outcome.makespan);
  // Unfolded, nothing is measured first.
  const work::RunResult unfolded =
      work::run(load_experiment(kSmall, {"workload.fold=false"}).experiment);
  REQUIRE(unfolded.ok());
  CHECK(unfolded.probes.empty());
}

TEST_CASE("step fold: assembled from synthetic measurements, in closed form") {
  // One pipeline stage, no DP: a micro-batch is the layers forward, the head, then back; the
  // last backward's gradient buckets follow its pieces, then the optimizer and the gather.
  const ExperimentFile f = load_experiment(
      kSmall, {"parallel.tp=4", "parallel.pp=1", "parallel.dp=1", "workload.global_batch=2",
               "workload.schedule=\"1f1b\"", "workload.virtual_stages=1"});
  const work::Experiment& e = f.experiment;
  const auto& job = std::get<work::TrainingStepJob>(e.job);
  const work::Mesh mesh(e.parallel);
  const work::JobEnv env{e.cluster, e.nccl, mesh, &*e.model, e.seed, &e.ep_libraries};
  const topo::Cluster cluster(e.cluster);
  const work::ComputeModel compute = work::compute_model(e);
  const work::BuildEnv build{env, cluster, &compute};

  namespace parts = work::step_parts;
  work::LayerTiming layer;
  layer.forward = Time::from_seconds(1e-3);
  layer.backward = Time::from_seconds(2e-3);
  layer.pair = layer.forward + layer.backward;
  parts::StepMeasurements m{.dense = layer, .sparse = std::nullopt, .dp = {},
                            .source = work::Source::Exact,
                            .kernels = {}, .speed = work::speeds_at(1.0), .ranks = {}};
  std::int64_t us = 10;
  for (const parts::DpKey& key : parts::dp_requests(job, build)) {
    m.dp[key] = Time::from_seconds(static_cast<double>(us) * 1e-6);  // 10, 20, ... us
    us += 10;
  }
  const std::vector<work::Case> cases = parts::fold_step(job, build, m);
  REQUIRE(cases.size() == 1);
  const work::Case& c = cases.front();
  const work::StepDetails& d = *work::step_details(c.details);
  const auto layers = static_cast<std::int64_t>(e.model->layers);
  const Time sync = m.dp_time(parts::layer_sync_key(job, *e.model, e.parallel, false));
  const Time vocab = m.dp_time(parts::vocab_sync_key(job, *e.model, e.parallel));
  const Time gather = m.dp_time(parts::param_gather_key(job, job.shape(env), 0));
  REQUIRE(d.grad_sync.size() == 1);
  CHECK(d.grad_sync.front().time == sync);
  CHECK(d.param_gather == gather);

  const work::Outcome o = work::simulate(cluster, c.plan);
  // Buckets: the head's, one per layer, the embedding's, each its measured time.
  const std::vector<Time> buckets = durations(c.plan, o, "gradient sync");
  REQUIRE(buckets.size() == static_cast<std::size_t>(layers + 2));
  CHECK(buckets.front() == vocab);
  CHECK(buckets[1] == sync);
  CHECK(buckets.back() == vocab);
  const Time compute_all =
      Time::ps(d.micro_batches * (layers * (m.dense->forward + m.dense->backward).count_ps() +
                                  (d.head_forward + d.head_backward).count_ps()));
  const std::vector<Time> optimizer = durations(c.plan, o, "optimizer");
  const std::vector<Time> norm = durations(c.plan, o, "gradient norm");
  const Time norm_reduce = m.dp_time(parts::norm_key());
  REQUIRE(optimizer.size() == 1);
  REQUIRE(norm.size() == 1);
  CHECK(durations(c.plan, o, "gradient-norm all-reduce") == std::vector<Time>{norm_reduce});
  // Clipping's norm reads the gradients (2 bytes per parameter), Adam 28 bytes per parameter,
  // both at the memory-bound kernels' share of HBM bandwidth.
  CHECK(static_cast<double>(optimizer.front().count_ps()) ==
        hopsim::test::approx(14.0 * static_cast<double>(norm.front().count_ps())));
  CHECK(d.optimizer.adam == optimizer.front());
  CHECK(d.optimizer.norm_all_reduce == norm_reduce);
  // Each bucket is shorter than a backward piece, so only the last layer's and the
  // embedding's wait after the last backward; then clipping's norm, its all-reduce, Adam, then
  // the gather, then the framework's fixed cost.
  CHECK(d.step_overhead == work::TrainingStepJob::kDefaultStepOverhead);
  CHECK(o.makespan == compute_all + sync + vocab + norm.front() + norm_reduce + optimizer.front() +
                          gather + d.step_overhead);
  // The buckets and the gather hold the GPU's DP stream one after another and count as its
  // communication: their sum, as nothing else communicates on one stage without DP.
  const work::Summary s = work::summarize(cluster, c.plan, o);
  Time held = gather + norm_reduce;
  for (const Time t : buckets) {
    held += t;
  }
  CHECK(s.ranks[d.representatives.front().index()].comm == held);
}

}  // namespace hopsim::config
