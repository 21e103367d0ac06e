// Chakra execution traces: the files (round trip, malformed input, the shipped example) and
// their replay (closed forms against hopsim's own kinds, matching errors, cycles).
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <nlohmann/json.hpp>

#include "approx.hpp"
#include "et_def.pb.h"
#include "tests/temp_dir.hpp"
#include "tools/chakra/et_file.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim {
namespace {

namespace fs = std::filesystem;
using work::EtNode;
using work::EtNodeType;
using work::EtRank;

const std::string kSource = HOPSIM_SOURCE_DIR;

class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("chakra_test") {}
  // Writes every rank of `ranks` as NAME.<rank>.et; returns the prefix.
  std::string write_trace(const std::string& name, const std::vector<EtRank>& ranks) const {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      write(fmt::format("{}.{}.et", name, r), chakra::encode_rank(ranks[r]));
    }
    return path(name);
  }
};

EtNode kernel(std::uint64_t id, std::string name, std::int64_t us,
              std::vector<std::uint64_t> deps = {}) {
  EtNode n;
  n.id = id;
  n.name = std::move(name);
  n.type = EtNodeType::Compute;
  n.duration = Time::us(us);
  n.stream = 7;
  n.deps = std::move(deps);
  return n;
}

EtNode collective(std::uint64_t id, std::string name, std::optional<work::CollectiveOp> op,
                  std::int64_t bytes, std::string group, std::vector<std::uint64_t> deps) {
  EtNode n;
  n.id = id;
  n.name = std::move(name);
  n.type = EtNodeType::Collective;
  n.collective = op ? work::EtCollective{work::EtCollective::Kind::Op, *op}
                    : work::EtCollective{work::EtCollective::Kind::Barrier};
  n.comm_bytes = bytes;
  n.group = std::move(group);
  n.deps = std::move(deps);
  return n;
}

EtNode p2p(std::uint64_t id, EtNodeType type, int peer, std::int64_t bytes,
           std::vector<std::uint64_t> deps) {
  EtNode n;
  n.id = id;
  n.name = type == EtNodeType::Send ? "nccl:send" : "nccl:recv";
  n.type = type;
  n.peer = peer;
  n.comm_bytes = bytes;
  n.deps = std::move(deps);
  return n;
}

// The shipped example (configs/chakra/example): four ranks, two per node (the experiment places
// them on GPUs 0, 1, 8 and 9), one MoE layer's forward with a tensor-parallel all-reduce (groups
// tp0 = {0, 1}, tp1 = {2, 3}), the expert all-to-alls over all four, a pipeline send/recv from
// the first node to the second, and a data-parallel gradient all-reduce across nodes (dp0 =
// {0, 2}, dp1 = {1, 3}).
std::vector<EtRank> example_trace() {
  using work::CollectiveOp;
  constexpr std::int64_t kMiB = 1 << 20;
  std::vector<EtRank> ranks(4);
  for (int r = 0; r < 4; ++r) {
    auto& nodes = ranks[static_cast<std::size_t>(r)].nodes;
    EtNode launch = kernel(1, "aten::linear", 15);
    launch.cpu = true;
    launch.stream.reset();
    nodes.push_back(launch);
    EtNode gemm = kernel(2, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", 420,
                         {1});
    gemm.flops = 2.0 * 8192 * 4096 * 14336;
    gemm.tensor_bytes = 2 * (8192LL * 4096 + 4096LL * 14336 + 8192LL * 14336);
    nodes.push_back(gemm);
    nodes.push_back(collective(3, "nccl:all_reduce", CollectiveOp::AllReduce, 64 * kMiB,
                               fmt::format("tp{}", r / 2), {2}));
    nodes.push_back(kernel(4, "moe_router_topk_softmax", 35, {3}));
    nodes.push_back(collective(5, "nccl:all_to_all dispatch", CollectiveOp::AllToAll, 32 * kMiB,
                               "", {4}));
    nodes.push_back(kernel(6, "cutlass_grouped_gemm_bf16_experts", 610, {5}));
    nodes.push_back(collective(7, "nccl:all_to_all combine", CollectiveOp::AllToAll, 32 * kMiB,
                               "", {6}));
    if (r < 2) {
      nodes.push_back(p2p(8, EtNodeType::Send, r + 2, 16 * kMiB, {7}));
    } else {
      nodes.push_back(p2p(8, EtNodeType::Recv, r - 2, 16 * kMiB, {7}));
    }
    nodes.push_back(kernel(9, "multi_tensor_apply_kernel (adam)", 180, {8}));
    nodes.push_back(collective(10, "nccl:all_reduce gradients", CollectiveOp::AllReduce,
                               128 * kMiB, fmt::format("dp{}", r % 2), {9}));
  }
  return ranks;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The experiment that replays `trace` on h100-dgx, with extra workload keys.
std::string experiment(const TempDir& dir, const std::string& trace,
                       const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json w = {{"kind", "chakra"}, {"trace", trace}};
  w.update(extra);
  const nlohmann::json e = {{"cluster", kSource + "/configs/clusters/h100-dgx.json"},
                            {"workload", w}};
  return dir.write("experiment.json", e.dump());
}

double replay_s(const std::string& experiment_file) {
  const config::ExperimentFile f = config::load_experiment(experiment_file, {});
  const work::RunResult r = work::run(f.experiment);
  REQUIRE(r.problems.empty());
  return r.cases.front().summary.step.seconds();
}

double run_s(const TempDir& dir, const nlohmann::json& workload) {
  const nlohmann::json e = {{"cluster", kSource + "/configs/clusters/h100-dgx.json"},
                            {"workload", workload}};
  const config::ExperimentFile f = config::load_experiment(dir.write("other.json", e.dump()), {});
  const work::RunResult r = work::run(f.experiment);
  REQUIRE(r.problems.empty());
  return r.cases.front().summary.step.seconds();
}

std::string load_error(const std::string& experiment_file) {
  try {
    (void)config::load_experiment(experiment_file, {});
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("chakra.files-round-trip") {
  const TempDir dir;
  const std::vector<EtRank> ranks = example_trace();
  const std::string prefix = dir.write_trace("x", ranks);
  const work::EtTrace back = chakra::read_trace(prefix);
  CHECK(back.version == chakra::kSchemaVersion);
  REQUIRE(back.ranks.size() == 4);
  for (std::size_t r = 0; r < 4; ++r) {
    REQUIRE(back.ranks[r].nodes.size() == ranks[r].nodes.size());
    for (std::size_t i = 0; i < ranks[r].nodes.size(); ++i) {
      const EtNode& a = ranks[r].nodes[i];
      const EtNode& b = back.ranks[r].nodes[i];
      CHECK(a.id == b.id);
      CHECK(a.name == b.name);
      CHECK(a.type == b.type);
      CHECK(a.deps == b.deps);
      CHECK(a.duration == b.duration);
      CHECK(a.cpu == b.cpu);
      CHECK(a.stream == b.stream);
      CHECK(a.flops == b.flops);
      CHECK(a.tensor_bytes == b.tensor_bytes);
      CHECK(a.collective == b.collective);
      CHECK(a.comm_bytes == b.comm_bytes);
      CHECK(a.peer == b.peer);
      CHECK(a.group == b.group);
    }
  }
  // A folder holding one trace names it as well as its prefix does, and so does a rank's file.
  CHECK(chakra::trace_files(dir.path("")).size() == 4);
  CHECK(chakra::trace_files(dir.path("x.2.et")).size() == 4);
}

TEST_CASE("chakra.example-is-current") {
  // HOPSIM_WRITE_CHAKRA_EXAMPLE=1 rewrites the shipped files from example_trace().
  const std::string prefix = kSource + "/configs/chakra/example/moe-layer";
  const std::vector<EtRank> ranks = example_trace();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string file = fmt::format("{}.{}.et", prefix, r);
    if (std::getenv("HOPSIM_WRITE_CHAKRA_EXAMPLE") != nullptr) {
      std::ofstream(file, std::ios::binary) << chakra::encode_rank(ranks[r]);
    }
    CHECK_MESSAGE(read_bytes(file) == chakra::encode_rank(ranks[r]),
                  file << " differs from example_trace() in tests/tools/chakra_test.cpp");
  }
}

namespace {

// A file of GlobalMetadata then `nodes`, written with the protobuf messages themselves (for
// what encode_rank never writes: wrong types, unknown attributes and node types).
std::string raw_file(const std::vector<chakra::Node>& nodes) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  chakra::GlobalMetadata meta;
  meta.set_version("0.0.4");
  google::protobuf::util::SerializeDelimitedToZeroCopyStream(meta, &stream);
  for (const chakra::Node& n : nodes) {
    google::protobuf::util::SerializeDelimitedToZeroCopyStream(n, &stream);
  }
  return out;
}

chakra::Node raw_node(std::uint64_t id, chakra::NodeType type) {
  chakra::Node n;
  n.set_id(id);
  n.set_name("n");
  n.set_type(type);
  return n;
}

std::string read_error(const std::string& file) {
  std::string version;
  try {
    (void)chakra::read_rank(file, 0, version);
  } catch (const chakra::EtError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("chakra.malformed-files") {
  const TempDir dir;
  const std::string good = chakra::encode_rank(example_trace()[0]);
  // Cut inside the last node: a length that promises more than the file holds.
  const std::string cut = dir.write("cut.0.et", good.substr(0, good.size() - 3));
  CHECK(read_error(cut) == cut + ": rank 0: the node message after node 9 (message 11) is "
                                 "truncated or malformed");
  // A length varint whose continuation bits never end.
  const std::string varint = dir.write("varint.0.et", good.substr(0, 40) + "\xff\xff\xff");
  CHECK(read_error(varint).find("truncated or malformed") != std::string::npos);
  CHECK(read_error(dir.write("empty.0.et", "")) ==
        dir.path("empty.0.et") + ": rank 0: is empty: a Chakra ET file starts with a "
                                 "GlobalMetadata message");
  CHECK(read_error(dir.write("text.0.et", "{\"not\": \"protobuf\"}")).find(
            "does not start with a GlobalMetadata message") != std::string::npos);

  chakra::Node wrong = raw_node(5, chakra::COMM_COLL_NODE);
  auto* type = wrong.add_attr();
  type->set_name("comm_type");
  type->set_int64_val(chakra::ALL_REDUCE);
  auto* size = wrong.add_attr();
  size->set_name("comm_size");
  size->set_string_val("4096");
  const std::string typed = dir.write("typed.0.et", raw_file({wrong}));
  CHECK(read_error(typed) == typed + ": rank 0: node 5: attribute \"comm_size\" must be an "
                                     "integer (one of the int, uint, sint or fixed values)");

  chakra::Node bcast = raw_node(6, chakra::COMM_COLL_NODE);
  auto* b = bcast.add_attr();
  b->set_name("comm_type");
  b->set_int64_val(chakra::GATHER);
  const std::string op = dir.write("op.0.et", raw_file({bcast}));
  CHECK(read_error(op).find("node 6: comm_type 3 (GATHER) is not a collective hopsim "
                            "replays") != std::string::npos);

  chakra::Node odd = raw_node(7, chakra::COMP_NODE);
  odd.add_attr()->set_name("my_flag");
  CHECK(read_error(dir.write("attr.0.et", raw_file({odd}))).find(
            "node 7: unknown attribute \"my_flag\"") != std::string::npos);
  chakra::Node control = raw_node(7, chakra::COMP_NODE);
  control.add_attr()->set_name("two\nlines");
  CHECK(read_error(dir.write("ctl.0.et", raw_file({control}))).find(
            "unknown attribute \"two\\x0alines\"") != std::string::npos);
  chakra::Node unknown = raw_node(8, chakra::COMP_NODE);
  unknown.set_type(static_cast<chakra::NodeType>(42));
  CHECK(read_error(dir.write("type.0.et", raw_file({unknown}))).find(
            "node 8: node type 42 is not one hopsim replays") != std::string::npos);
  chakra::Node load = raw_node(9, chakra::MEM_LOAD_NODE);
  CHECK(read_error(dir.write("load.0.et", raw_file({load}))).find(
            "MEM_LOAD_NODE is not replayed") != std::string::npos);
  chakra::Node send = raw_node(10, chakra::COMM_SEND_NODE);
  CHECK(read_error(dir.write("send.0.et", raw_file({send}))).find(
            "node 10: a COMM_SEND_NODE needs attribute \"comm_dst\"") != std::string::npos);

  // A dependency on a node the file does not hold (Chakra's converter leaves control
  // dependencies on host operators it removed) is dropped and counted.
  chakra::Node dangling = raw_node(11, chakra::COMP_NODE);
  dangling.add_data_deps(99);
  dangling.add_ctrl_deps(12);
  std::string version;
  const std::string two = raw_file({dangling, raw_node(12, chakra::COMP_NODE)});
  const work::EtRank kept = chakra::read_rank(dir.write("dep.0.et", two), 0, version);
  CHECK(kept.nodes[0].deps == std::vector<std::uint64_t>{12});
  CHECK(kept.dropped_deps == 1);
  CHECK(kept.first_dropped == "node 11 on node 99");
  chakra::Node self = raw_node(13, chakra::COMP_NODE);
  self.add_ctrl_deps(13);
  const work::EtRank itself = chakra::read_rank(dir.write("self.0.et", raw_file({self})), 0,
                                                version);
  CHECK(itself.nodes[0].deps.empty());
  CHECK(itself.first_dropped == "node 13 on itself");
  const chakra::Node twice = raw_node(12, chakra::COMP_NODE);
  CHECK(read_error(dir.write("twice.0.et", raw_file({twice, twice}))).find(
            "node 12: a second node has this id") != std::string::npos);
}

TEST_CASE("chakra.rank-files") {
  const TempDir dir;
  std::vector<EtRank> ranks = example_trace();
  dir.write_trace("t", ranks);
  fs::remove(dir.path("t.2.et"));
  try {
    (void)chakra::trace_files(dir.path("t"));
    FAIL("a missing rank was accepted");
  } catch (const chakra::EtError& e) {
    CHECK(std::string(e.what()) ==
          dir.path("t") + ": rank 2's file (" + dir.path("t") +
              ".2.et) is missing: a trace has one file per rank, numbered from 0 (3 found, the "
              "highest rank 3)");
  }
  CHECK_THROWS_WITH_AS(chakra::trace_files(dir.path("none")),
                       (dir.path("none") + ": no Chakra trace files (" + dir.path("none") +
                        ".0.et, " + dir.path("none") + ".1.et, ...) found")
                           .c_str(),
                       chakra::EtError);
  dir.write_trace("u", {ranks[0]});
  CHECK_THROWS_WITH_AS(chakra::trace_files(dir.path("")),
                       (dir.path("") + ": holds the traces \"t\" and \"u\"; name one as "
                                       "FOLDER/NAME (the files' part before .<rank>.et)")
                           .c_str(),
                       chakra::EtError);
}

TEST_CASE("chakra.replay-compute") {
  const TempDir dir;
  EtRank one;
  one.nodes.push_back(kernel(1, "a", 100));
  EtNode host = kernel(2, "host", 20, {1});
  host.cpu = true;
  one.nodes.push_back(host);
  one.nodes.push_back(kernel(3, "b", 50, {2}));
  EtNode side = kernel(4, "side", 130);  // another stream: overlaps a and b
  side.stream = 9;
  one.nodes.push_back(side);
  const std::string prefix = dir.write_trace("c", {one});
  // Recorded: a, the host op (a delay), then b on the compute stream; side beside them.
  CHECK(replay_s(experiment(dir, prefix)) == hopsim::test::approx(170e-6).epsilon(1e-9));
  // A second kernel on stream 9 queues behind side: 130 + 130 > 170.
  EtNode side2 = kernel(5, "side2", 130);
  side2.stream = 9;
  one.nodes.push_back(side2);
  const std::string longer = dir.write_trace("d", {one});
  CHECK(replay_s(experiment(dir, longer)) == hopsim::test::approx(260e-6).epsilon(1e-9));

  // Model: launch + FLOPs at the BF16 peak times the GEMM efficiency (no bytes).
  EtRank gemm;
  EtNode g = kernel(1, "gemm", 1);
  g.flops = 1e12;
  gemm.nodes.push_back(g);
  const std::string file = experiment(dir, dir.write_trace("m", {gemm}), {{"compute", "model"}});
  const config::ExperimentFile f = config::load_experiment(file, {});
  const auto& gpu = f.experiment.cluster.gpu;
  const double expected = 4e-6 + 1e12 / (gpu.peak_bf16_tflops * 1e12 * gpu.gemm_efficiency);
  CHECK(replay_s(file) == hopsim::test::approx(expected).epsilon(1e-9));
}

TEST_CASE("chakra.replay-matches-hopsim-kinds") {
  const TempDir dir;
  constexpr std::int64_t kBytes = 64 << 20;
  // An all-reduce over 8 ranks is NCCL's tuner's pick, as the collective kind runs it.
  std::vector<EtRank> ranks(8);
  for (EtRank& r : ranks) {
    r.nodes.push_back(collective(1, "ar", work::CollectiveOp::AllReduce, kBytes, "", {}));
  }
  const double replay = replay_s(experiment(dir, dir.write_trace("ar", ranks)));
  const double direct =
      run_s(dir, {{"kind", "collective"}, {"op", "all_reduce"}, {"algorithm", "auto"},
                  {"bytes", kBytes}, {"ranks", {0, 1, 2, 3, 4, 5, 6, 7}}});
  CHECK(replay == hopsim::test::approx(direct).epsilon(1e-12));
  CHECK(replay > 0);
  // A send/recv across nodes is one flow: latency + bytes / bandwidth, as the flows kind.
  std::vector<EtRank> pair(2);
  pair[0].nodes.push_back(p2p(1, EtNodeType::Send, 1, kBytes, {}));
  pair[1].nodes.push_back(p2p(1, EtNodeType::Recv, 0, kBytes, {}));
  const double p2p_s =
      replay_s(experiment(dir, dir.write_trace("p", pair), {{"gpus", {0, 8}}}));
  const double flow_s = run_s(
      dir, {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 8}, {"bytes", kBytes}}}}});
  CHECK(p2p_s == hopsim::test::approx(flow_s).epsilon(1e-12));
  // A broadcast over 4 GPUs of a node: 8 pieces pipelined over 3 hops, each hop its own links,
  // so (8 + 3 - 1) piece times, each a flow alone: latency + (S/8) / bandwidth.
  std::vector<EtRank> bcast(4);
  for (EtRank& r : bcast) {
    EtNode n = collective(1, "bcast", std::nullopt, kBytes, "", {});
    n.collective.kind = work::EtCollective::Kind::Broadcast;
    r.nodes.push_back(n);
  }
  const double piece_s = run_s(
      dir, {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 1}, {"bytes", kBytes / 8}}}}});
  CHECK(replay_s(experiment(dir, dir.write_trace("b", bcast))) ==
        hopsim::test::approx(10 * piece_s).epsilon(1e-9));
}

TEST_CASE("chakra.load-bound") {
  // 64 ranks and 50 all-reduces: within the plan's bound (the algorithm's flows per
  // collective, not per member), so the experiment loads.
  const TempDir dir;
  std::vector<EtRank> ranks(64);
  for (EtRank& r : ranks) {
    for (std::uint64_t i = 1; i <= 50; ++i) {
      r.nodes.push_back(collective(i, "ar", work::CollectiveOp::AllReduce, 1 << 20, "",
                                   i > 1 ? std::vector<std::uint64_t>{i - 1}
                                         : std::vector<std::uint64_t>{}));
    }
  }
  CHECK(load_error(experiment(dir, dir.write_trace("big", ranks))) == "no error");
}

TEST_CASE("chakra.replay-errors") {
  const TempDir dir;
  std::vector<EtRank> cyc(2);  // each rank receives before it sends: a deadlock
  cyc[0].nodes = {p2p(1, EtNodeType::Recv, 1, 8, {}), p2p(2, EtNodeType::Send, 1, 8, {1})};
  cyc[1].nodes = {p2p(1, EtNodeType::Recv, 0, 8, {}), p2p(2, EtNodeType::Send, 0, 8, {1})};
  const std::string prefix = dir.write_trace("cyc", cyc);
  const std::string e = experiment(dir, prefix);
  CHECK(load_error(e) ==
        e + ": /workload/trace: " + prefix +
            ".0.et: rank 0: node 2: waits for itself: send rank 1 node 2 / recv rank 0 node 1 "
            "-> send rank 0 node 2 / recv rank 1 node 1 -> (again) (a dependency cycle, across "
            "ranks through collectives and send/recv pairs)");

  std::vector<EtRank> mismatch(2);
  mismatch[0].nodes = {collective(1, "ar", work::CollectiveOp::AllReduce, 64, "", {})};
  mismatch[1].nodes = {collective(1, "ag", work::CollectiveOp::AllGather, 64, "", {})};
  const std::string m = dir.write_trace("mis", mismatch);
  CHECK(load_error(experiment(dir, m)).find(
            m + ".1.et: rank 1: node 1: collective 1 on group \"\" is all_gather of 64 B here "
                "and all_reduce of 64 B on rank 0 (node 1)") != std::string::npos);

  std::vector<EtRank> grouped(2);
  for (EtRank& r : grouped) {
    r.nodes = {collective(1, "ar", work::CollectiveOp::AllReduce, 64, "7", {})};
  }
  const std::string g = dir.write_trace("grp", grouped);
  CHECK(load_error(experiment(dir, g)).find(
            "node 1: its pg_name \"7\" is not in the experiment's /workload/groups") !=
        std::string::npos);
  CHECK(load_error(experiment(dir, g, {{"groups", {{"7", {0}}}}})).find(
            g + ".1.et: rank 1: node 1: rank 1 is not a member of group \"7\"") !=
        std::string::npos);
  CHECK(replay_s(experiment(dir, g, {{"groups", {{"7", {1, 0}}}}})) > 0);

  std::vector<EtRank> lonely(2);
  lonely[0].nodes = {p2p(1, EtNodeType::Send, 1, 8, {})};
  lonely[1].nodes = {kernel(1, "k", 1)};
  const std::string l = dir.write_trace("lonely", lonely);
  CHECK(load_error(experiment(dir, l)).find(
            "rank 0: node 1: no COMM_RECV_NODE on rank 1 receives this send (comm_src 0, "
            "comm_tag 0)") != std::string::npos);
  CHECK(load_error(experiment(dir, l, {{"gpus", {0, 0}}})).find(
            "/workload/gpus/1: GPU 0 runs an earlier rank too") != std::string::npos);
  CHECK(load_error(experiment(dir, l, {{"algorithms", {{"all_to_all", "ring"}}}})).find(
            "/workload/algorithms/all_to_all") != std::string::npos);
}

}  // namespace hopsim

namespace hopsim {

TEST_CASE("chakra.real-trace") {
  // An excerpt of a trace Chakra's converter wrote (tests/data/chakra/README.md).
  const std::string prefix = kSource + "/tests/data/chakra/param-ddp";
  const work::EtTrace t = chakra::read_trace(prefix);
  REQUIRE(t.ranks.size() == 1);
  const work::EtRank& r = t.ranks[0];
  CHECK(r.nodes.size() == 400);
  std::map<std::string, int> kinds;
  for (const EtNode& n : r.nodes) {
    ++kinds[n.type == EtNodeType::Collective ? std::string(n.collective.name())
             : n.cpu                         ? "host"
                                             : "kernel"];
  }
  CHECK(kinds == std::map<std::string, int>{{"broadcast", 2}, {"host", 267}, {"kernel", 131}});
  CHECK(r.dropped_deps == 271);
  CHECK(r.first_dropped == "node 216 on node 3");
  const TempDir dir;
  CHECK(replay_s(experiment(dir, prefix)) > 1e-3);
}

}  // namespace hopsim
