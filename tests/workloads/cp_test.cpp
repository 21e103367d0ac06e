// Context parallelism: the seeds' balance arithmetic, attended pairs against brute force, ring
// overlap against its closed form, and the bytes each algorithm moves.
#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "workloads/cp/cp_layout.hpp"
#include "workloads/cp/cp_te_merge.hpp"
#include "workloads/cp/cp_torch.hpp"
#include "workloads/experiment/run.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

// Attended pairs by enumeration: key <= query (causal), inside one document (document mask).
std::int64_t brute_pairs(const std::vector<std::int64_t>& doc_of, AttentionMask mask,
                         TokenRange q, TokenRange k) {
  std::int64_t n = 0;
  for (std::int64_t i = q.begin; i < q.end; ++i) {
    for (std::int64_t j = k.begin; j < k.end; ++j) {
      const bool same_doc = doc_of.empty() || doc_of[static_cast<std::size_t>(i)] ==
                                                  doc_of[static_cast<std::size_t>(j)];
      n += mask == AttentionMask::Full || (j <= i && same_doc) ? 1 : 0;
    }
  }
  return n;
}

// A Llama-like model: 8 heads of 128, `kv` KV heads.
ModelSpec model(std::int64_t kv_heads) {
  ModelSpec m;
  m.name = "test";
  m.layers = 1;
  m.hidden = 1024;
  m.ffn_hidden = 4096;
  m.heads = 8;
  m.kv_heads = kv_heads;
  m.head_dim = 128;
  m.vocab = 1000;
  return m;
}

// `nodes` nodes of `per_node` H100-like GPUs (roofline only), the job, cp and tp.
Experiment layer_experiment(int nodes, int per_node, AttentionLayerJob job, std::int64_t cp,
                            std::int64_t tp, std::int64_t kv_heads) {
  Experiment e;
  e.cluster.nodes = nodes;
  e.cluster.gpus_per_node = per_node;
  e.cluster.gpu.name = "H100 SXM";
  e.cluster.gpu.peak_bf16_tflops = 989;
  e.cluster.gpu.peak_fp8_tflops = 1979;
  e.cluster.gpu.hbm_GB = 80;
  e.cluster.gpu.hbm_GBps = 3350;
  e.cluster.gpu.sms = 132;
  e.cluster.nvlink = {Bandwidth::gigabytes_per_s(370), Time::ns(715),
                      Bandwidth::gigabytes_per_s(450)};
  e.cluster.nic = {Bandwidth::gigabytes_per_s(47), Time::ns(450), Bandwidth::gigabytes_per_s(50)};
  e.model = model(kv_heads);
  e.parallel.cp = cp;
  e.parallel.tp = tp;
  e.job = job;
  return e;
}

// Bytes each GPU sends in phases named `phase` of pass `pass`.
std::vector<std::int64_t> sent(const CaseResult& c, std::string_view phase, std::string_view pass,
                               int gpus) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(gpus), 0);
  for (const PlanTask& t : c.plan.tasks()) {
    const Phase& p = c.plan.phases()[t.phase];
    if (t.kind == PlanTaskKind::Flow && t.src != t.dst && p.name() == phase && p.pass() == pass) {
      out[t.src.index()] += t.bytes.n;
    }
  }
  return out;
}

const PhaseTime& phase_time(const CaseResult& c, std::string_view name, std::string_view pass) {
  for (std::size_t p = 0; p < c.plan.phases().size(); ++p) {
    if (c.plan.phases()[p].name() == name && c.plan.phases()[p].pass() == pass) {
      return c.summary.phases[p];
    }
  }
  FAIL("no phase " << name << " " << pass);
  return c.summary.phases.front();
}

}  // namespace

TEST_CASE("CP balance: the seeds' units, contiguous 1..8 and zigzag 2c+1, exact FLOPs") {
  const int c = 8;
  const CpLayout contiguous(8192, c, CpBalance::Contiguous, AttentionMask::Causal);
  const CpLayout zigzag(8192, c, CpBalance::Zigzag, AttentionMask::Causal);
  for (int q = 0; q < c; ++q) {
    int units = 0;
    int zig_units = 0;
    std::int64_t zig_pairs = 0;
    for (int kv = 0; kv < c; ++kv) {
      units += contiguous.units(q, kv);
      zig_units += zigzag.units(q, kv);
      zig_pairs += zigzag.pairs(q, kv);
    }
    CHECK(units == q + 1);
    CHECK(zig_units == 2 * c + 1);
    // Every zigzag rank attends 1/c of the causal pairs exactly.
    CHECK(zig_pairs * c == attention_pairs(Mask::CausalTopLeft, 8192, 8192));
  }
  std::int64_t first = 0;
  std::int64_t last = 0;
  for (int kv = 0; kv < c; ++kv) {
    first += contiguous.pairs(0, kv);
    last += contiguous.pairs(c - 1, kv);
  }
  // Exact work: the last rank 7.5 blocks against the first's half block, with the diagonal's
  // own k/2 (k = 1024): (7.5 k^2 + k/2) / (k^2/2 + k/2).
  const double k = 1024;
  CHECK(static_cast<double>(last) / static_cast<double>(first) ==
        hopsim::test::approx((7.5 * k * k + k / 2) / (k * k / 2 + k / 2)));
  CHECK(static_cast<double>(last) / static_cast<double>(first) ==
        hopsim::test::approx(15).epsilon(0.01));
}

TEST_CASE("a zigzag over one position is one chunk and one causal call, as frameworks run it") {
  const CpLayout zigzag(4096, 1, CpBalance::Zigzag, AttentionMask::Causal);
  const CpLayout contiguous(4096, 1, CpBalance::Contiguous, AttentionMask::Causal);
  CHECK(zigzag.chunk_tokens() == 4096);
  REQUIRE(zigzag.chunks(0).size() == 1);
  const auto calls = zigzag.calls(0, 0);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].s_q == 4096);
  CHECK(calls[0].s_kv == 4096);
  CHECK(calls[0].mask == Mask::CausalTopLeft);
  CHECK(calls[0].pairs == attention_pairs(Mask::CausalTopLeft, 4096, 4096));
  CHECK(contiguous.calls(0, 0).size() == 1);
  CHECK(zigzag.units(0, 0) == 1);
  // Two positions still cut 4 chunks: position 0 holds the first and the last.
  const CpLayout two(4096, 2, CpBalance::Zigzag, AttentionMask::Causal);
  CHECK(two.chunk_tokens() == 1024);
  CHECK(two.chunks(0).size() == 2);
  CHECK(two.chunks(0)[1].begin == 3072);
}

TEST_CASE("CP layout: attended pairs and calls agree with brute force, documents and cache") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int ring = 1 + static_cast<int>(rng() % 4);
    const bool zig = rng() % 2 == 0;
    const std::int64_t seq = (zig ? 2 * ring : ring) * (1 + static_cast<std::int64_t>(rng() % 12));
    const auto mask = static_cast<AttentionMask>(rng() % 3);
    std::vector<std::int64_t> docs;
    std::vector<std::int64_t> doc_of;
    if (mask == AttentionMask::Document) {
      docs = draw_documents(seq, 1 + static_cast<std::int64_t>(rng() % 7), rng());
      for (std::size_t d = 0; d < docs.size(); ++d) {
        doc_of.insert(doc_of.end(), static_cast<std::size_t>(docs[d]),
                      static_cast<std::int64_t>(d));
      }
    }
    const std::int64_t cached = mask == AttentionMask::Causal ? ring * static_cast<std::int64_t>(rng() % 5) : 0;
    const CpLayout layout(seq, ring, zig ? CpBalance::Zigzag : CpBalance::Contiguous, mask, docs,
                          cached);
    std::int64_t total = 0;
    for (int q = 0; q < ring; ++q) {
      for (int kv = 0; kv < ring; ++kv) {
        std::int64_t expect = 0;
        for (const TokenRange& qc : layout.chunks(q)) {
          for (const TokenRange& kc : layout.chunks(kv)) {
            expect += brute_pairs(doc_of, mask, qc, kc);
          }
          expect += qc.size() * layout.cached_per_position();
        }
        CHECK(layout.pairs(q, kv) == expect);
        total += expect;
      }
      std::int64_t all = 0;
      for (const AttentionCall& call : layout.calls_all_keys(q)) {
        all += call.pairs;
        CHECK(call.pairs <= call.s_q * call.s_kv);
      }
      std::int64_t by_block = 0;
      for (int kv = 0; kv < ring; ++kv) {
        by_block += layout.pairs(q, kv);
      }
      CHECK(all == by_block);
    }
    const std::int64_t whole = brute_pairs(doc_of, mask, {0, seq}, {0, seq}) + seq * cached;
    CHECK(total == whole);
  }
}

TEST_CASE("ring attention: compute above the hop hides it, below, (c-1)(hop - compute) shows") {
  // Full mask, contiguous: every step computes the same block. One GPU per node: the ring
  // crosses the fabric. Forward only.
  for (const std::int64_t seq : {std::int64_t{4096}, std::int64_t{262144}}) {
    AttentionLayerJob job;
    job.seq_len = seq;
    job.mask = AttentionMask::Full;
    job.cp.balance = CpBalance::Contiguous;
    job.passes = Passes::Forward;
    const int c = 4;
    const RunResult r = run(layer_experiment(c, 1, job, c, 1, 8));
    REQUIRE(r.ok());
    const CaseResult& cr = r.cases.front();
    const CpDetails& cp = *cr.cp();
    const auto& compute = cp.step_compute[0];
    const auto& sends = cp.step_send[0];
    REQUIRE(compute.size() == c);
    REQUIRE(sends.size() == c - 1);
    const Time step = cr.outcome.times[compute[1]].end - cr.outcome.times[compute[1]].start;
    const Time hop = cr.outcome.times[sends[1]].end - cr.outcome.times[sends[1]].start;
    const PhaseTime& attention = phase_time(cr, "attention", "fwd");
    if (seq == 4096) {
      REQUIRE(hop > step);
      CHECK(attention.exposed.seconds() ==
            hopsim::test::approx((c - 1) * (hop - step).seconds()).epsilon(0.01));
    } else {
      REQUIRE(step > hop);
      CHECK(attention.exposed == Time{});
      // The steps, and Transformer Engine's K/V pack before them and output merge after.
      Time merges;
      for (std::size_t i = 0; i < cr.plan.tasks().size(); ++i) {
        const PlanTask& t = cr.plan.tasks()[i];
        const std::string& label = cr.plan.label(t);
        if (t.src.index() == 0 && (label == "cp kv pack" || label == "cp merge")) {
          merges += cr.outcome.times[i].end - cr.outcome.times[i].start;
        }
      }
      CHECK(merges > Time{});
      CHECK(attention.compute.seconds() ==
            hopsim::test::approx((c * step + merges).seconds()).epsilon(1e-6));
    }
  }
}

TEST_CASE("a prefill pays its request's fixed cost once, SendRecv across nodes at its share") {
  // Four GPUs, one per node: every ring transfer crosses the fabric.
  AttentionLayerJob job;
  job.seq_len = 4096;
  job.mask = AttentionMask::Full;
  job.cp.balance = CpBalance::Contiguous;
  job.mode = LayerMode::Prefill;
  job.passes = Passes::Forward;
  const int c = 4;
  const auto hop_and_step = [&](const Experiment& e) {
    const RunResult r = run(e);
    REQUIRE(r.ok());
    const CaseResult& cr = r.cases.front();
    const PlanTaskId send = cr.cp()->step_send[0][1];
    const Time hop = cr.outcome.times[send].end - cr.outcome.times[send].start;
    return std::pair{hop, cr.summary.step};
  };
  const Experiment base = layer_experiment(c, 1, job, c, 1, 8);
  const auto [hop, step] = hop_and_step(base);
  // At half and a quarter of the NIC's rate the block's bytes take 2x and 4x as long (the
  // route's latency stays): each halving adds twice what the one before added.
  const auto hop_at = [&](double efficiency) {
    Experiment e = base;
    e.nccl.p2p_net_efficiency = efficiency;
    return hop_and_step(e).first;
  };
  const Time half = hop_at(0.5);
  const Time quarter = hop_at(0.25);
  CHECK(half > hop);
  CHECK((quarter - half).seconds() ==
        hopsim::test::approx(2 * (half - hop).seconds()).epsilon(1e-6));
  // The fixed cost: a delay on every GPU before the first layer, the step longer by exactly it.
  AttentionLayerJob costly = job;
  costly.request_overhead = Time::us(300'000);
  const auto [hop2, step2] = hop_and_step(layer_experiment(c, 1, costly, c, 1, 8));
  CHECK(hop2 == hop);
  CHECK(step2 == step + Time::us(300'000));
}

TEST_CASE("Ulysses moves 4 N h / P per rank forward (MHA), all-gather (c-1)/c of K and V") {
  const std::int64_t n = 8192;
  const std::int64_t p = 4;
  AttentionLayerJob job;
  job.seq_len = n;
  job.passes = Passes::Forward;
  job.cp.algorithm = CpAlgorithm::Ulysses;
  const RunResult u = run(layer_experiment(1, 8, job, p, 1, 8));
  REQUIRE(u.ok());
  const std::int64_t h = 8 * 128;  // heads x head_dim of the MHA model
  // Q, K, V in, the output back: 4 N h / P elements per rank, of which (P-1)/P leave it.
  const std::int64_t expected = 4 * n * h / p * (p - 1) / p * 2;
  for (std::int64_t bytes : sent(u.cases.front(), "attention", "fwd", static_cast<int>(p))) {
    CHECK(bytes == expected);
  }
  CHECK(u.cases.front().cp()->cp_bytes_per_gpu_fwd == expected);

  job.cp.algorithm = CpAlgorithm::AllGather;
  const RunResult g = run(layer_experiment(1, 8, job, p, 1, 2));
  REQUIRE(g.ok());
  // Each rank holds N/P tokens of K and V (2 KV heads of 128, BF16) and receives the rest.
  const std::int64_t kv_local = n / p * 2 * 2 * 128 * 2;
  std::int64_t total = 0;
  for (std::int64_t bytes : sent(g.cases.front(), "attention", "fwd", static_cast<int>(p))) {
    total += bytes;
  }
  CHECK(total == p * (p - 1) * kv_local);  // every rank receives (p-1) blocks
  CHECK(g.cases.front().cp()->cp_bytes_per_gpu_fwd == (p - 1) * kv_local);
}

TEST_CASE("pass-Q moves fewer bytes than pass-KV when new tokens are few against the cache") {
  // Pass-KV moves (c-1) blocks of (new + cached)/c tokens of K and V; pass-Q moves (c-1) blocks
  // of new/c queries and returns (c-1) partial outputs: it wins when the cache is long.
  const int c = 4;
  const std::int64_t fresh = 4096;
  const std::int64_t kv_heads = 2;
  const auto bytes = [&](CpAlgorithm a, std::int64_t cached) {
    AttentionLayerJob job;
    job.seq_len = fresh;
    job.cached_tokens = cached;
    job.mode = LayerMode::Prefill;
    job.passes = Passes::Forward;
    job.cp.algorithm = a;
    const RunResult r = run(layer_experiment(c, 1, job, c, 1, kv_heads));
    REQUIRE(r.ok());
    return r.cases.front().cp()->cp_bytes_per_gpu_fwd;
  };
  // Closed forms per GPU: K/V of (fresh + cached)/c tokens, 2 heads x (128 + 128) x 2 B; Q of
  // fresh/c tokens, 8 heads x 128 x 2 B; outputs 8 heads x (128 x 2 + 4) B.
  const auto kv = [&](std::int64_t cached) {
    return (c - 1) * (fresh + cached) / c * kv_heads * 256 * 2;
  };
  const std::int64_t q = (c - 1) * fresh / c * (8 * 128 * 2 + 8 * (128 * 2 + 4));
  for (const std::int64_t cached : {std::int64_t{0}, std::int64_t{65536}}) {
    CHECK(bytes(CpAlgorithm::Ring, cached) == kv(cached));
    CHECK(bytes(CpAlgorithm::RingPassQ, cached) == q);
  }
  // The crossover: pass-Q wins past (q / ((c-1)/c x 2 x 256 x 2) - fresh) cached tokens.
  CHECK(bytes(CpAlgorithm::RingPassQ, 0) > bytes(CpAlgorithm::Ring, 0));
  CHECK(bytes(CpAlgorithm::RingPassQ, 65536) < bytes(CpAlgorithm::Ring, 65536));
}

TEST_CASE("pass-Q's partial outputs go home in an all-to-all after both ends' last step") {
  // Meta's pass-Q: the ring computes, then an all-to-all returns each position's partial
  // outputs to their owner: no output leaves before its sender and its owner are done.
  AttentionLayerJob job;
  job.seq_len = 4096;
  job.cached_tokens = 65536;
  job.mode = LayerMode::Prefill;
  job.passes = Passes::Forward;
  job.cp.algorithm = CpAlgorithm::RingPassQ;
  const int c = 4;
  const RunResult r = run(layer_experiment(c, 1, job, c, 1, 2));
  REQUIRE(r.ok());
  const CaseResult& k = r.cases.front();
  const CpDetails& cp = *k.cp();
  for (int g = 0; g < c; ++g) {
    const auto& outputs = cp.step_output[static_cast<std::size_t>(g)];
    REQUIRE(outputs.size() == static_cast<std::size_t>(c - 1));
    const Time owner_done =
        k.outcome.times[cp.step_compute[static_cast<std::size_t>(g)].back()].end;
    for (const PlanTaskId f : outputs) {
      const PlanTask& t = k.plan.tasks()[f];
      CHECK(t.dst.index() == static_cast<std::size_t>(g));
      const Time sender_done = k.outcome.times[cp.step_compute[t.src.index()].back()].end;
      CHECK(k.outcome.times[f].start >= std::max(owner_done, sender_done));
    }
  }
}

TEST_CASE("Meta's pass-KV / pass-Q rule (Algorithm 5) in closed form") {
  // Llama 3 405B's attention shape per GPU (128 query, 8 KV heads over TP 8), CP 4 across
  // nodes at 50 GB/s line rate, 800 TF (the 500 W H100): K/V hide above
  // T1 = N C (N_KV / N_H) e / (2 BW) = 4 x 800e12 / 16 x 2 / 100e9 = 4,000 tokens; at a
  // context of 128,000 the miss-rate rule gives 0.125 / (1 + 4 x 128,000 x 50e9 / (4 x 800e12
  // x 2)) = 0.125 / 5 = 2.5%, below T1 / S = 3.125%.
  AttentionLayerJob job;
  job.mode = LayerMode::Prefill;
  job.passes = Passes::Forward;
  Experiment e = layer_experiment(4, 8, job, 4, 8, 8);
  e.cluster.gpu.peak_bf16_tflops = 800;
  ModelSpec m = *e.model;
  m.heads = 128;
  m.kv_heads = 8;
  m.head_dim = 128;
  const auto choice = [&](std::int64_t fresh, std::int64_t cached) {
    AttentionLayerJob j = job;
    j.seq_len = fresh;
    j.cached_tokens = cached;
    return j.pass_choice(m, e.parallel, e.cluster, true);
  };
  const AttentionLayerJob::PassChoice one = choice(1280, 126720);  // 1% miss, Meta's Table 4
  CHECK(one.message_rule_miss_rate == hopsim::test::approx(0.125));
  CHECK(one.hidden_kv_tokens == hopsim::test::approx(4000));
  CHECK(one.crossover_miss_rate == hopsim::test::approx(0.025));
  CHECK(one.miss_rate == hopsim::test::approx(0.01));
  CHECK_FALSE(one.pass_kv);
  CHECK(choice(6400, 121600).pass_kv);  // 5%: above the crossover
  // A short context: the K/V hide under attention sooner than the miss-rate rule bites.
  CHECK(choice(100, 9900).crossover_miss_rate == hopsim::test::approx(0.125 / 1.3125));
}

TEST_CASE("zigzag beats contiguous on a causal ring, every GPU of the mesh runs its own ring") {
  AttentionLayerJob job;
  job.seq_len = 65536;
  job.passes = Passes::Forward;
  const auto time = [&](CpBalance b) {
    job.cp.balance = b;
    const RunResult r = run(layer_experiment(4, 2, job, 4, 2, 2));
    REQUIRE(r.ok());
    CHECK(r.cases.front().summary.involved == 8);
    return r.cases.front().summary.step;
  };
  CHECK(time(CpBalance::Zigzag) < time(CpBalance::Contiguous));
}

TEST_CASE("a layer's throughput: its TP x CP groups' tokens and model FLOPs in closed form") {
  AttentionLayerJob job;
  job.seq_len = 8192;
  job.micro_batch = 2;
  job.mlp = true;
  Experiment e = layer_experiment(2, 8, job, 4, 2, 8);
  e.parallel.dp = 2;  // 16 GPUs: 2 TP x CP groups of 8, each 2 sequences
  const RunResult r = run(e);
  REQUIRE(r.ok());
  REQUIRE(r.cases.front().throughput.has_value());
  const Throughput& t = *r.cases.front().throughput;
  CHECK(t.gpus == 16);
  CHECK(t.tokens == 4 * 8192);
  CHECK(t.peak_tflops == 989);
  // Forward per token: 2 FLOPs per weight of Q, K, V, O (8 KV heads: 4 h^2) and the MLP
  // (3 h f); per sequence the scores' 4 h per causal pair; backward twice the forward.
  const double h = 1024;
  const double gemm = 2 * (4 * h * h + 3 * h * 4096);
  const double pairs = 8192.0 * 8193.0 / 2;
  CHECK(t.model_flops == hopsim::test::approx(3 * (4 * 8192 * gemm + 4 * 4 * h * pairs)));
  // Forward only: a third of it.
  job.passes = Passes::Forward;
  e.job = job;
  const RunResult forward = run(e);
  REQUIRE(forward.ok());
  CHECK(forward.cases.front().throughput->model_flops ==
        hopsim::test::approx(t.model_flops / 3).epsilon(1e-12));
}

TEST_CASE("every CP row: its builder runs a small layer, and its calls attend every pair once") {
  // CP 4 on one node, forward (prefill where the row says so): every row's plan computes the
  // layer's attention FLOPs exactly once over the GPUs (the ring's total), sends K/V, queries or
  // activations, and one position's calls over every position attend every pair of the
  // sequence once (what explain prices).
  double ring_flops = 0;
  for (const CpAlgorithmRow& row : kCpAlgorithms) {
    CAPTURE(row.name);
    AttentionLayerJob job;
    job.seq_len = 4096;
    job.passes = Passes::Forward;
    job.mode = row.prefill_only ? LayerMode::Prefill : LayerMode::Training;
    job.cp.algorithm = row.algorithm;
    const RunResult r = run(layer_experiment(1, 8, job, 4, 1, 8));
    REQUIRE(r.ok());
    const CaseResult& c = r.cases.front();
    CHECK(c.choice == row.name);
    CHECK(c.cp()->cp_bytes_per_gpu_fwd > 0);
    double flops = 0;
    for (const PlanTask& t : c.plan.tasks()) {
      const Phase& p = c.plan.phases()[t.phase];
      if (t.kind == PlanTaskKind::Compute && p.name() == "attention") {
        flops += static_cast<double>(t.flops.n);
      }
    }
    ring_flops = row.algorithm == CpAlgorithm::Ring ? flops : ring_flops;
    CHECK(flops == hopsim::test::approx(ring_flops).epsilon(1e-12));
    const CpLayout layout = job.layout(4, 1);
    std::int64_t pairs = 0;
    for (int q = 0; q < layout.ring(); ++q) {
      for (const AttentionCall& call : row.calls(layout, q)) {
        pairs += call.pairs;
      }
    }
    CHECK(static_cast<double>(pairs) == job.attended_pairs(1));
  }
}

TEST_CASE("PyTorch's ring: its SDPA calls attend exactly the pairs each step needs") {
  // torch's load balance (zigzag) and its plain ring (contiguous): step 0 one causal call of the
  // rank's S/r tokens; later steps half the block or half the queries, or the whole block of an
  // earlier rank (a later one skipped). Every call's pairs are the layout's exact ones.
  for (const CpBalance balance : {CpBalance::Zigzag, CpBalance::Contiguous}) {
    for (const int r : {1, 2, 4, 8}) {
      CAPTURE(r);
      const std::int64_t s = 1024;
      const CpLayout layout(s, r, balance, AttentionMask::Causal);
      const std::int64_t n = s / r;
      std::int64_t total = 0;
      for (int q = 0; q < r; ++q) {
        std::int64_t rank = 0;
        for (int kv = 0; kv < r; ++kv) {
          const std::vector<AttentionCall> calls =
              torch_step_calls(layout, q, kv, AttentionMask::Causal);
          std::int64_t pairs = 0;
          for (const AttentionCall& c : calls) {
            CHECK(c.pairs == (c.mask == Mask::None ? c.s_q * c.s_kv : c.s_q * (c.s_q + 1) / 2));
            pairs += c.pairs;
          }
          CHECK(pairs == layout.pairs(q, kv));
          CHECK(calls.size() == (pairs > 0 ? 1U : 0U));
          if (kv == q) {
            CHECK(calls.front().s_q == n);
            CHECK(calls.front().mask == Mask::CausalTopLeft);
          }
          rank += pairs;
        }
        if (balance == CpBalance::Zigzag) {  // every rank the same work
          CHECK(rank == n * (n + 1) / 2 + (r - 1) * n * (n / 2));
        }
        total += rank;
      }
      CHECK(total == s * (s + 1) / 2);
    }
  }
}

TEST_CASE("PyTorch's ring moves K/V with every query head, its dK/dV sums in FP32") {
  // GQA (2 KV heads of 8) on one node, CP 4, forward and backward: torch's K/V carry the 8
  // query heads (TorchTitan repeats them before SDPA); forward each rank receives the other 3
  // blocks, once by all-gather or by 3 shifts; backward the same again, and its FP32 dK/dV
  // partial sums (twice a BF16 block) shift 4 times, the last home.
  const std::int64_t n = 8192;
  const std::int64_t p = 4;
  const std::int64_t block = n / p * 8 * (128 + 128) * 2;
  for (const CpRotate rotate : {CpRotate::AllGather, CpRotate::AllToAll}) {
    CAPTURE(cp_rotate_name(rotate));
    AttentionLayerJob job;
    job.seq_len = n;
    job.cp.impl = CpImpl::Torch;
    job.cp.rotate = rotate;
    const RunResult r = run(layer_experiment(1, 8, job, p, 1, 2));
    REQUIRE(r.ok());
    const CaseResult& c = r.cases.front();
    CHECK(c.cp()->cp_bytes_per_gpu_fwd == (p - 1) * block);
    for (const std::int64_t bytes : sent(c, "attention", "fwd", static_cast<int>(p))) {
      CHECK(bytes == (p - 1) * block);
    }
    for (const std::int64_t bytes : sent(c, "attention", "bwd", static_cast<int>(p))) {
      CHECK(bytes == (p - 1) * block + p * 2 * block);
    }
    // The same FLOPs as Megatron's ring on the same layout, plus the merges' memory traffic.
    double flops = 0;
    for (const PlanTask& t : c.plan.tasks()) {
      const Phase& ph = c.plan.phases()[t.phase];
      if (t.kind == PlanTaskKind::Compute && ph.name() == "attention" && ph.pass() == "fwd") {
        flops += static_cast<double>(t.flops.n);
      }
    }
    CHECK(flops == hopsim::test::approx(4.0 * job.attended_pairs(1) * 8 * 128).epsilon(1e-12));
  }
}

TEST_CASE("Transformer Engine's ring merges: the first touch of a row copies, every later adds") {
  // One row per half and one element per row (a copy moves 2 BF16 bytes a row and element
  // read and written: 4; an add 6), so a rank's bytes count its touches. Causal zigzag with r
  // ranks: rank k's first query chunk attends the blocks of ranks 0..k, its second every
  // block; block b's first key chunk is attended by every rank, its second by ranks 0..b.
  // Each row is copied once and added to at every later touch (forward: its first step's
  // output written scaled, the later ones added; the statistics alike, FP32).
  for (const int r : {2, 3, 4, 8}) {
    CAPTURE(r);
    const auto touches = [](std::int64_t n) { return 2 + 3 * (n - 1); };  // in row-copies / 2
    std::int64_t dkv_total = 0;
    for (int k = 0; k < r; ++k) {
      CAPTURE(k);
      const TeMergeBytes q = te_merge_bytes({2, 1, 0, 1, 1, true}, k, r);
      REQUIRE(q.bwd_step.size() == static_cast<std::size_t>(r));
      std::int64_t dq = 0;
      for (const std::int64_t b : q.bwd_step) {
        dq += b;
      }
      CHECK(dq == 2 * (touches(k + 1) + touches(r)));
      // Output (2 bytes) and statistics (4) per row: 6 bytes a row-copy / 2.
      CHECK(q.fwd_merge == 6 * (touches(k + 1) + touches(r)));
      const TeMergeBytes kv = te_merge_bytes({2, 0, 1, 1, 0, true}, k, r);
      CHECK(kv.fwd_merge == 0);
      for (const std::int64_t b : kv.bwd_step) {
        dkv_total += b;
      }
      // Without a mask every step is whole: one copy, r - 1 adds, of dQ (2 rows of 2 bytes)
      // and dK/dV (2 rows of two 2-byte elements).
      const TeMergeBytes full = te_merge_bytes({2, 1, 1, 1, 1, false}, k, r);
      for (std::size_t i = 0; i < full.bwd_step.size(); ++i) {
        CHECK(full.bwd_step[i] == (i == 0 ? 2 : 3) * (2 * 2 + 2 * 2 * 2));
      }
    }
    std::int64_t expected = 0;
    for (int b = 0; b < r; ++b) {
      expected += 2 * (touches(r) + touches(b + 1));
    }
    CHECK(dkv_total == expected);
  }
}

TEST_CASE("Megatron's ring runs Transformer Engine's merges on the compute stream, in its order") {
  // CP 4 on one node, forward and backward: per GPU one K/V pack a pass, one output merge
  // after the forward ring, one dQ/dK/dV sum after each backward step, which waits for the
  // partial sum it adds to and holds back the GPU's next step. Pass-Q, the all-gather and
  // PyTorch's ring (its own merges, cp_torch.hpp) have none of them.
  const int p = 4;
  AttentionLayerJob job;
  job.seq_len = 8192;
  const RunResult r = run(layer_experiment(1, 8, job, p, 1, 2));
  REQUIRE(r.ok());
  const CaseResult& c = r.cases.front();
  std::map<std::pair<std::string, std::string>, int> count;
  std::map<int, std::vector<std::size_t>> sums;   // per GPU, in step order
  std::map<int, std::vector<std::size_t>> steps;  // the backward's attention steps
  std::map<std::pair<int, int>, std::size_t> dkv;  // (receiver, step): the partial sum's flow
  for (std::size_t i = 0; i < c.plan.tasks().size(); ++i) {
    const PlanTask& t = c.plan.tasks()[i];
    const std::string pass(c.plan.phases()[t.phase].pass());
    const std::string& label = c.plan.label(t);
    if (t.kind == PlanTaskKind::Flow && label.starts_with("dkv step ")) {
      dkv[{static_cast<int>(t.dst.index()), std::stoi(label.substr(9))}] = i;
    }
    if (t.kind != PlanTaskKind::Compute) {
      continue;
    }
    ++count[{label, pass}];
    const int g = static_cast<int>(t.src.index());
    if (label == "cp dq dkv sum") {
      sums[g].push_back(i);
    } else if (label == "attention" && pass == "bwd") {
      steps[g].push_back(i);
    }
  }
  CHECK(count[{"cp kv pack", "fwd"}] == p);
  CHECK(count[{"cp kv pack", "bwd"}] == p);
  CHECK(count[{"cp merge", "fwd"}] == p);
  CHECK(count[{"cp merge", "bwd"}] == 0);
  CHECK(count[{"cp dq dkv sum", "bwd"}] == p * p);
  const auto& times = c.outcome.times;
  for (int g = 0; g < p; ++g) {
    REQUIRE(sums[g].size() == static_cast<std::size_t>(p));
    REQUIRE(steps[g].size() == static_cast<std::size_t>(p));
    for (int j = 0; j < p; ++j) {
      const Time sum_start = times[sums[g][static_cast<std::size_t>(j)]].start;
      CHECK(sum_start >= times[steps[g][static_cast<std::size_t>(j)]].end);
      if (j > 0) {  // the partial sum from the GPU before, sent after its step j - 1
        CHECK(sum_start >= times[dkv.at({g, j - 1})].end);
      }
      if (j + 1 < p) {
        CHECK(times[steps[g][static_cast<std::size_t>(j + 1)]].start >=
              times[sums[g][static_cast<std::size_t>(j)]].end);
      }
    }
  }
  for (const CpAlgorithm a : {CpAlgorithm::RingPassQ, CpAlgorithm::AllGather}) {
    AttentionLayerJob other = job;
    other.cp.algorithm = a;
    other.mode = LayerMode::Prefill;  // pass-Q runs prefills
    other.passes = Passes::Forward;
    const RunResult o = run(layer_experiment(1, 8, other, p, 1, 2));
    for (const auto& problem : o.problems) {
      MESSAGE(problem.path << ": " << problem.message);
    }
    REQUIRE(o.ok());
    for (const PlanTask& t : o.cases.front().plan.tasks()) {
      CHECK(!o.cases.front().plan.label(t).starts_with("cp "));
    }
  }
  // Ulysses runs Transformer Engine's ring over its groups (a2a+p2p) when there are more than
  // one (4 ranks in groups of 2: a ring of 2), and none when one group holds every rank.
  for (const std::int64_t u : {std::int64_t{2}, std::int64_t{4}}) {
    CAPTURE(u);
    AttentionLayerJob ulysses = job;
    ulysses.cp.algorithm = CpAlgorithm::Ulysses;
    ulysses.cp.ulysses_degree = u;
    ulysses.passes = Passes::Forward;
    const RunResult o = run(layer_experiment(1, 8, ulysses, p, 1, 8));
    REQUIRE(o.ok());
    int packs = 0;
    for (const PlanTask& task : o.cases.front().plan.tasks()) {
      packs += o.cases.front().plan.label(task) == "cp kv pack" ? 1 : 0;
    }
    CHECK(packs == (u < p ? p : 0));
  }
  AttentionLayerJob torch = job;
  torch.cp.impl = CpImpl::Torch;
  const RunResult t = run(layer_experiment(1, 8, torch, p, 1, 2));
  REQUIRE(t.ok());
  for (const PlanTask& task : t.cases.front().plan.tasks()) {
    CHECK(t.cases.front().plan.label(task) != "cp kv pack");
  }
}
