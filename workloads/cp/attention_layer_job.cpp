// Names and checks of the attention-layer workload.
#include "workloads/cp/attention_layer_job.hpp"

#include <tuple>

#include <fmt/format.h>

#include "workloads/costs/bounds.hpp"
#include "workloads/costs/layer_check.hpp"

namespace hopsim::work {
namespace {

// Tasks a plan may hold: far above any real layer, well below memory trouble (~100 B each).
constexpr double kMaxTasks = kMaxPlanTasks;

// Query and KV heads of one TP rank (KV heads are replicated when tp exceeds them).
std::pair<std::int64_t, std::int64_t> heads_per_tp_rank(const ModelSpec& m, std::int64_t tp) {
  const std::int64_t kv = m.mla ? m.heads : m.kv_heads;
  return {m.heads / tp, std::max<std::int64_t>(1, kv / tp)};
}

// PyTorch's CP: the pass-KV ring over causal (or, without load balance, full) masks, no cache.
void check_torch(const AttentionLayerJob& job, Problems& out) {
  if (job.cp.impl != CpImpl::Torch) {
    return;
  }
  if (job.cp.algorithm != CpAlgorithm::Ring) {
    out.push_back({"/workload/cp/impl",
                   fmt::format("\"torch\" runs PyTorch's pass-KV ring: cp.algorithm \"ring\", "
                               "not \"{}\"",
                               cp_algorithm_name(job.cp.algorithm))});
  }
  if (job.mask == AttentionMask::Document ||
      (job.mask == AttentionMask::Full && job.cp.balance == CpBalance::Zigzag)) {
    out.push_back({"/workload/cp/impl",
                   fmt::format("\"torch\" takes mask \"causal\" (or \"full\" with balance "
                               "\"contiguous\": its load balance needs is_causal), not mask "
                               "\"{}\" with balance \"{}\"",
                               attention_mask_name(job.mask), balance_name(job.cp.balance))});
  }
  if (job.cached_tokens > 0) {
    out.push_back({"/workload/cp/impl", "\"torch\" models no KV cache: cached_tokens 0"});
  }
  if (job.fp8_dot_product_attention) {
    out.push_back({"/workload/fp8_dot_product_attention",
                   "\"torch\" runs SDPA in BF16 whatever the linear layers' dtype: false"});
  }
}

// ulysses_degree only where the algorithm has Ulysses groups; then the algorithm's own checks.
void check_algorithm(const AttentionLayerJob& job, const JobEnv& env, Problems& out) {
  const CpAlgorithmRow& row = cp_algorithm_row(job.cp.algorithm);
  if (!row.ulysses && job.cp.ulysses_degree > 0) {
    out.push_back({"/workload/cp/ulysses_degree",
                   fmt::format("only for cp.algorithm {}, not \"{}\"",
                               cp_algorithm_list([](const CpAlgorithmRow& r) { return r.ulysses; },
                                                 true, " or "),
                               row.name)});
  }
  if (row.check != nullptr) {
    row.check(job, env, out);
  }
  check_torch(job, out);
  if (job.fp8_dot_product_attention && job.dtype != Dtype::Fp8) {
    out.push_back({"/workload/fp8_dot_product_attention",
                   fmt::format("an FP8 attention kernel needs dtype \"fp8\", not \"{}\"",
                               dtype_name(job.dtype))});
  }
}

void check_chunks(const AttentionLayerJob& job, std::int64_t cp, Problems& out) {
  const std::int64_t ring = cp / std::max<std::int64_t>(1, job.ulysses(cp));
  const bool zigzag = zigzag_splits(job.cp.balance, ring);
  const std::int64_t chunks = zigzag ? 2 * cp : cp;
  if (job.seq_len % chunks != 0) {
    out.push_back({"/workload/seq_len",
                   fmt::format("{} tokens do not split into {} equal chunks ({}cp, cp = {}){}",
                               job.seq_len, chunks, zigzag ? "2 x " : "", cp,
                               zigzag ? "; zigzag balance needs 2 x cp to divide seq_len" : "")});
  }
  if (job.cached_tokens % ring != 0) {
    out.push_back(
        {"/workload/cached_tokens",
         fmt::format("{} cached tokens do not split over {} ring ranks", job.cached_tokens, ring)});
  }
}

void check_mode(const AttentionLayerJob& job, Problems& out) {
  if (job.mode == LayerMode::Prefill && job.backward()) {
    out.push_back({"/workload/passes", fmt::format("mode \"prefill\" runs forward only, not \"{}\"",
                                                   passes_name(job.passes))});
  }
  const CpAlgorithmRow& row = cp_algorithm_row(job.cp.algorithm);
  if (row.prefill_only && job.mode != LayerMode::Prefill) {
    out.push_back({"/workload/cp/algorithm",
                   fmt::format("{} is an inference algorithm (forward only): set mode "
                               "\"prefill\"",
                               row.name)});
  }
  if (job.cached_tokens > 0 && job.mode != LayerMode::Prefill) {
    out.push_back({"/workload/cached_tokens", "a KV cache needs mode \"prefill\""});
  }
  if (job.cached_tokens > 0 && job.mask != AttentionMask::Causal) {
    out.push_back(
        {"/workload/cached_tokens", fmt::format("a KV cache needs mask \"causal\", not \"{}\"",
                                                attention_mask_name(job.mask))});
  }
  if (job.cached_tokens > 0 && !row.kv_cache) {
    out.push_back({"/workload/cached_tokens",
                   fmt::format("a KV cache is modelled for cp.algorithm {}",
                               cp_algorithm_list([](const CpAlgorithmRow& r) { return r.kv_cache; },
                                                 false, " and "))});
  }
}

void check_documents(const AttentionLayerJob& job, Problems& out) {
  const bool given = !job.documents.empty();
  const bool drawn = job.document_mean_tokens > 0;
  if (job.mask != AttentionMask::Document) {
    if (given || drawn) {
      out.push_back({given ? "/workload/documents" : "/workload/document_mean_tokens",
                     "only with mask \"document\""});
    }
    return;
  }
  if (given == drawn) {
    out.push_back({"/workload/mask",
                   "mask \"document\" needs either documents (lengths) or document_mean_tokens"});
    return;
  }
  std::int64_t sum = 0;
  for (std::int64_t len : job.documents) {
    sum += len;
  }
  if (given && sum != job.seq_len) {
    out.push_back(
        {"/workload/documents",
         fmt::format("document lengths sum to {} tokens, not seq_len {}", sum, job.seq_len)});
  }
}

// Simulated time and bytes stay far inside what 64-bit picoseconds and byte counts hold: the
// roofline's compute time per GPU (a full-mask bound on attention) at most 1e5 s, any one
// transfer at most 1e15 bytes, the plan's bytes at most 4e18.
void check_work(const AttentionLayerJob& job, const JobEnv& env, Problems& out) {
  const ModelSpec& m = *env.model;
  const ParallelSpec& p = env.mesh.spec();
  const AttentionDims d = job.dims(m, p);
  const auto f = [](std::int64_t v) { return static_cast<double>(v); };
  const double tokens = f(job.seq_len) * f(job.micro_batch) / f(p.cp);  // per GPU
  const double keys = f(job.seq_len + job.cached_tokens) * f(job.micro_batch);
  const double attention = 2 * f(d.q_heads) * f(d.d_qk + d.d_v) * tokens * keys;
  const LayerParams lp = layer_params(m, false);
  const double gemms = 2 * tokens * (lp.attention + (job.mlp ? lp.mlp : 0.0)) / f(p.tp);
  const double fwd = job.forward() ? 1.0 : 0.0;
  const double bwd = job.backward() ? 1.0 : 0.0;
  const double flops = f(job.layers) * (attention * (fwd + 2.5 * bwd) + gemms * (fwd + 2 * bwd));
  const topo::GpuSpec& gpu = env.cluster.gpu;
  const double rate = std::min(gpu.peak_bf16_tflops, gpu.peak_fp8_tflops) * 1e12 *
                      std::min(gpu.gemm_efficiency, gpu.attention_efficiency);
  constexpr double kMaxSeconds = kMaxComputeSeconds;
  if (flops / rate > kMaxSeconds) {
    out.push_back(
        {job.layers > 1 ? "/workload/layers" : "/workload/seq_len",
         fmt::format("{} layer(s) of {} tokens take ~{:.3g} s of compute per GPU "
                     "(roofline); at most {:.0e} s are simulated: fewer tokens or "
                     "layers, or more cp",
                     job.layers, job.seq_len + job.cached_tokens, flops / rate, kMaxSeconds)});
    return;
  }
  // K/V of the whole context (the all-gather's output), and TP activations of the layer.
  const double transfer = std::max(keys * f(d.kv_heads) * f(d.d_qk + d.d_v) * f(d.elem),
                                   tokens * f(p.tp) * f(m.hidden) * 2);
  const double plan = transfer * 8 * f(job.layers) * 2 * f(env.mesh.size());
  if (transfer > 1e15 || plan > 4e18) {
    out.push_back({"/workload/seq_len",
                   fmt::format("{} tokens make transfers of ~{:.3g} bytes ({:.3g} in all); at "
                               "most 1e15 per transfer and 4e18 per run",
                               job.seq_len + job.cached_tokens, transfer, plan)});
    return;
  }
  // Transfers at the slowest link, in series with the compute: within simulated time.
  const double flows =
      (16.0 + 3.0 * f(p.cp) + 8.0 * f(p.tp)) * f(env.mesh.size()) * f(job.layers) * 2;
  const PlanLoad load = layer_load(flows, plan, flops / rate, env.cluster, env.nccl);
  if (const auto problem = load_problem(load, env.cluster, "this layer")) {
    out.push_back({"/workload/seq_len", *problem});
  }
}

}  // namespace

std::string_view cp_impl_name(CpImpl i) {
  return i == CpImpl::Torch ? "torch" : "megatron";
}

std::string_view cp_rotate_name(CpRotate r) {
  return r == CpRotate::AllToAll ? "alltoall" : "allgather";
}

std::string_view mode_name(LayerMode m) {
  return m == LayerMode::Prefill ? "prefill" : "training";
}

std::string_view passes_name(Passes p) {
  switch (p) {
    case Passes::Forward:
      return "forward";
    case Passes::Backward:
      return "backward";
    case Passes::Both:
      return "both";
  }
  return "both";
}

std::int64_t AttentionLayerJob::ulysses(std::int64_t cp_degree) const {
  if (!cp_algorithm_row(cp.algorithm).ulysses) {
    return 1;
  }
  return cp.ulysses_degree > 0 ? cp.ulysses_degree : cp_degree;
}

Dtype AttentionLayerJob::kernel_dtype() const {
  const bool fp8 =
      dtype == Dtype::Fp8 && fp8_dot_product_attention && cp.impl != CpImpl::Torch;
  return fp8 ? Dtype::Fp8 : Dtype::Bf16;
}

std::int64_t AttentionLayerJob::kv_block_bytes(const AttentionDims& d,
                                               const CpLayout& layout) const {
  const std::int64_t tokens =
      (layout.tokens_per_position() + layout.cached_per_position()) * micro_batch;
  return tokens * d.attn_kv_heads * (d.d_qk + d.d_v) * d.elem;
}

AttentionDims AttentionLayerJob::dims(const ModelSpec& m, const ParallelSpec& p) const {
  AttentionDims d;
  d.tokens = seq_len * micro_batch / p.cp;
  std::tie(d.q_heads, d.kv_heads) = heads_per_tp_rank(m, p.tp);
  d.d_qk = m.mla ? m.mla_shape.qk_nope_head_dim + m.mla_shape.qk_rope_head_dim : m.head_dim;
  d.d_v = m.mla ? m.mla_shape.v_head_dim : m.head_dim;
  d.elem = kernel_dtype() == Dtype::Fp8 ? 1 : 2;
  d.u = ulysses(p.cp);
  d.r = p.cp / d.u;
  d.attn_q_heads = d.q_heads / d.u;
  d.attn_kv_heads = std::max<std::int64_t>(1, d.kv_heads / d.u);
  if (cp.impl == CpImpl::Torch) {  // SDPA (BF16, kernel_dtype) on K/V repeated to the query heads
    d.attn_kv_heads = d.attn_q_heads;
  }
  return d;
}

namespace {

// What the ring's closed forms weigh: the GPU's peak for `dtype` (FLOP/s) and the rate a
// ring transfer reaches, the line rate of its link (send/recv's share of it across nodes).
struct RingRates {
  double peak = 0;
  double link = 0;
};

RingRates ring_rates(Dtype dtype, const topo::Spec& cluster, bool over_network,
                     double net_efficiency) {
  RingRates r;
  r.peak =
      (dtype == Dtype::Fp8 ? cluster.gpu.peak_fp8_tflops : cluster.gpu.peak_bf16_tflops) * 1e12;
  r.link = over_network ? cluster.nic.line_rate().bytes_per_s * net_efficiency
                        : cluster.nvlink.line_rate().bytes_per_s;
  return r;
}

}  // namespace

double AttentionLayerJob::overlap_threshold_tokens(const ModelSpec& m, const ParallelSpec& p,
                                                   const topo::Spec& cluster, bool over_network,
                                                   double net_efficiency) const {
  // A full block of t tokens: 2 t^2 hq (dqk + dv) FLOPs against t hkv (dqk + dv) elem bytes.
  const AttentionDims d = dims(m, p);
  const RingRates r = ring_rates(kernel_dtype(), cluster, over_network, net_efficiency);
  return r.peak / r.link * static_cast<double>(d.attn_kv_heads * d.elem) /
         static_cast<double>(2 * d.attn_q_heads);
}

AttentionLayerJob::PassChoice AttentionLayerJob::pass_choice(const ModelSpec& m,
                                                             const ParallelSpec& p,
                                                             const topo::Spec& cluster,
                                                             bool over_network,
                                                             double net_efficiency) const {
  const AttentionDims d = dims(m, p);
  const RingRates rates = ring_rates(kernel_dtype(), cluster, over_network, net_efficiency);
  const double c = rates.peak;
  const double bw = rates.link;
  const double n = static_cast<double>(d.r);
  const double e = static_cast<double>(d.elem);
  const double kv_over_q =
      static_cast<double>(d.attn_kv_heads) / static_cast<double>(d.attn_q_heads);
  const double context = static_cast<double>(seq_len + cached_tokens);
  PassChoice out;
  out.message_rule_miss_rate = 2 * kv_over_q;
  out.hidden_kv_tokens = n * c * kv_over_q * e / (2 * bw);
  // pass-Q while T < hidden_kv_tokens and T / S < 2 N_KV / N_H - 4 T BW / (N C e): with
  // T = x S the second is x < 2 N_KV / N_H / (1 + 4 S BW / (N C e)).
  out.crossover_miss_rate =
      std::min(out.message_rule_miss_rate / (1 + 4 * context * bw / (n * c * e)),
               out.hidden_kv_tokens / context);
  out.miss_rate = static_cast<double>(seq_len) / context;
  out.pass_kv = out.miss_rate >= out.crossover_miss_rate;
  return out;
}

CpLayout AttentionLayerJob::layout(std::int64_t cp_degree, std::uint64_t seed) const {
  const std::int64_t ring = cp_degree / ulysses(cp_degree);
  std::vector<std::int64_t> docs = documents;
  if (mask == AttentionMask::Document && docs.empty()) {
    docs = draw_documents(seq_len, document_mean_tokens, seed);
  }
  return CpLayout(seq_len, static_cast<int>(ring), cp.balance, mask, std::move(docs),
                  cached_tokens);
}

void AttentionLayerJob::check(const JobEnv& env, Problems& out) const {
  if (!check_model_and_gpu(env, kKind, out)) {
    return;
  }
  const ParallelSpec& p = env.mesh.spec();
  if (p.pp != 1) {
    out.push_back({"/parallel/pp", fmt::format("an attention layer runs on one pipeline stage: "
                                               "pp must be 1, got {}",
                                               p.pp)});
  }
  const ModelSpec& m = *env.model;
  // Model widths are at most 2^20 and heads 2^14 (the model parser's ranges), so the kernel
  // shapes stay within the compute model's 2^31 when these products do.
  if ((seq_len + cached_tokens) * micro_batch > kMaxExtent || micro_batch * m.heads > kMaxExtent) {
    out.push_back({"/workload/micro_batch",
                   fmt::format("{} sequences of {} tokens ({} heads) make kernels larger than "
                               "2^31 rows",
                               micro_batch, seq_len + cached_tokens, m.heads)});
    return;
  }
  check_mode(*this, out);
  check_documents(*this, out);
  check_algorithm(*this, env, out);
  if (out.empty()) {
    check_chunks(*this, p.cp, out);
  }
  const double tasks = plan_tasks(env.mesh);
  if (tasks > kMaxTasks) {
    out.push_back({"/workload/layers",
                   fmt::format("{} layers over {} GPUs make a plan of ~{:.2g} tasks, more than "
                               "{:.0e}; simulate fewer layers",
                               layers, env.mesh.size(), tasks, kMaxTasks)});
  }
  if (out.empty()) {
    check_work(*this, env, out);
  }
}

double AttentionLayerJob::plan_tasks(const Mesh& mesh) const {
  // Tasks per layer and GPU: a handful of GEMMs, a compute step and a few flows per ring step,
  // and the TP collectives' flows.
  const ParallelSpec& p = mesh.spec();
  const double per_gpu = 16.0 + 3.0 * static_cast<double>(p.cp) + 8.0 * static_cast<double>(p.tp);
  return per_gpu * static_cast<double>(mesh.size()) * static_cast<double>(layers) *
         (forward() && backward() ? 2.0 : 1.0);
}

double AttentionLayerJob::estimated_plan_bytes(const JobEnv& env) const {
  return plan_tasks(env.mesh) * kBytesPerPlanTask;
}

double AttentionLayerJob::attended_pairs(std::uint64_t seed) const {
  const auto d = [](std::int64_t n) { return static_cast<double>(n); };
  const auto causal = [&](std::int64_t n) { return d(n) * d(n + 1) / 2; };
  switch (mask) {
    case AttentionMask::Full:
      return d(seq_len) * d(seq_len + cached_tokens);
    case AttentionMask::Document: {
      const std::vector<std::int64_t> docs =
          documents.empty() ? draw_documents(seq_len, document_mean_tokens, seed) : documents;
      double pairs = 0;
      for (const std::int64_t n : docs) {
        pairs += causal(n);
      }
      return pairs;
    }
    case AttentionMask::Causal:
      break;
  }
  return causal(seq_len) + d(seq_len) * d(cached_tokens);
}

Throughput AttentionLayerJob::throughput(const JobEnv& env, double gemm_flops_per_token) const {
  const ParallelSpec& p = env.mesh.spec();
  const double sequences = static_cast<double>(env.mesh.size()) / static_cast<double>(p.tp * p.cp) *
                           static_cast<double>(micro_batch);
  const double tokens = sequences * static_cast<double>(seq_len);
  const double scores = 4 * static_cast<double>(env.model->hidden) * attended_pairs(env.seed);
  const double flops = (tokens * gemm_flops_per_token + sequences * scores) *
                       static_cast<double>(layers) * model_flops_passes(passes);
  return {env.mesh.size(), tokens, flops, env.cluster.gpu.peak_bf16_tflops};
}

}  // namespace hopsim::work
