// One test body over every pipeline schedule and every op source: the folded step (each op a
// measured task), the folded step with perturbed ranks (partial folding: a rank whose layer
// group a perturbed link touches runs that group's real layers where the schedule's ops are
// plain forwards and backwards, else its own measurements) and the unfolded step (each op its
// stage's real layer subgraphs on every GPU) agree within 1%, on a dense and a MoE model.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::config {
namespace {

const std::string kExperiments = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/";

// A model and the layout it runs every schedule on.
struct Model {
  std::string name;
  std::string file;
  std::vector<std::string> sets;
};

// Llama 3 8B on 32 GPUs (TP 2, PP 4, DP 4); DeepSeek-V3 cut to 8 MoE layers of 32 experts on
// 16 H800 (PP 4, DP 4, EP 4), DeepSeek's selective recomputation, its pairs simulated
// overlapped. (A dense layer paired with a MoE layer runs its two halves one after the other
// unfolded, where the fold hides each side's exposed exchanges under the other's compute:
// with DeepSeek's first layer dense the unfolded DualPipe step is slower, healthy and with one
// GPU's NVLinks at half rate: docs/pipeline.md gives the measured figures.)
const std::vector<Model> kModels = {
    {"dense", kExperiments + "llama3-8b-step-32gpu.json", {}},
    {"moe",
     kExperiments + "deepseek-v3-step.json",
     {"model.layers=8", "model.moe.routed_experts=32", "model.moe.first_dense_layers=0",
      "model.mtp_depth=0", "parallel.pp=4", "parallel.dp=4", "parallel.ep=4",
      "workload.seq_len=1024", "workload.global_batch=32"}},
};

// What each op source is asked for: the healthy cluster, a GPU whose NVLinks run at half their
// rate (its TP layer group's real layers under partial folding), the last stage's GPU slower.
const std::vector<std::string> kPerturbations = {
    "", R"([{"gpus": [3], "links": "nvlink", "bandwidth": 0.5}])",
    R"([{"gpus": [15], "compute_speed": 0.9}])"};

// A schedule as the workload names it: its name and virtual_stages.
struct ScheduleRowName {
  std::string name;
  int chunks = 1;
};

// The step, folded or not, and how it was folded.
struct Step {
  double seconds = 0;
  std::string folding;
};

// `no_pipeline`: pp 1, the 4 stages' GPUs in DP (the layout 1f1b_ep_overlap runs on).
Step step(const Model& m, const ScheduleRowName& schedule, const std::string& perturbations,
          bool fold, bool no_pipeline = false) {
  std::vector<std::string> sets = m.sets;
  sets.push_back("workload.schedule=\"" + schedule.name + "\"");
  sets.push_back("workload.virtual_stages=" + std::to_string(schedule.chunks));
  if (no_pipeline) {
    sets.push_back("parallel.pp=1");
    sets.push_back("parallel.dp=16");
  }
  if (!perturbations.empty()) {
    sets.push_back("perturbations=" + perturbations);
  }
  sets.push_back(fold ? "workload.fold=true" : "workload.fold=false");
  const work::RunResult r = work::run(load_experiment(m.file, sets).experiment);
  REQUIRE(r.ok());
  REQUIRE(r.cases.front().outcome.stuck.empty());
  return {r.cases.front().outcome.makespan.seconds(), r.cases.front().step()->folding};
}

}  // namespace

TEST_CASE("every schedule and every op source: folded, partially folded and unfolded agree") {
  for (const work::ScheduleRow* row : work::pipe_schedules()) {
    const ScheduleRowName schedule{std::string(row->name), row->takes_chunks ? 2 : 1};
    for (const Model& m : kModels) {
      for (const std::string& perturbations : kPerturbations) {
        CAPTURE(schedule.name);
        CAPTURE(m.name);
        CAPTURE(perturbations);
        const bool no_pipeline = schedule.name == "1f1b_ep_overlap";
        const Step folded = step(m, schedule, perturbations, true, no_pipeline);
        const Step unfolded = step(m, schedule, perturbations, false, no_pipeline);
        // Partial folding runs a perturbed rank's real layers only where the ops are plain;
        // a pairing schedule's perturbed rank runs its own measurements, which see the
        // perturbed link alone, not shared with the activations crossing it: 1.4% short
        // (DualPipe, MoE, NVLinks at half rate).
        const bool apart = !row->plain_ops() && perturbations.find("nvlink") != std::string::npos;
        INFO("folded " << folded.seconds << " s, unfolded " << unfolded.seconds << " s");
        // Without a pipeline plain 1F1B's fold is 2-3% short here already (16 DP ranks' gradient
        // syncs, one measured for all): the overlap must add nothing to that, but with the
        // halved NVLinks, where plain 1F1B runs the perturbed rank's real layers and the
        // pairs cannot, both gaps add up: 4.3% (dense) and 2.8% (MoE) short, checked within 5%.
        double expected = unfolded.seconds;
        double within = apart ? 0.02 : 0.01;
        if (no_pipeline) {
          const ScheduleRowName plain{"1f1b", 1};
          if (apart) {
            within = 0.05;
          } else {
            expected *= step(m, plain, perturbations, true, true).seconds /
                        step(m, plain, perturbations, false, true).seconds;
          }
        }
        CHECK(folded.seconds == hopsim::test::approx(expected).epsilon(within));
        CHECK(unfolded.folding.starts_with("unfolded: all"));
        // A perturbed link's layer group runs as real traffic where the ops are plain.
        const bool expanded = folded.folding.find("real layers") != std::string::npos;
        CHECK(expanded == (row->plain_ops() && perturbations.find("nvlink") != std::string::npos));
      }
    }
  }
}

}  // namespace hopsim::config
