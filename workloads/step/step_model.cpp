// A training step's layout in closed form: layers per stage, parameters, memory, model FLOPs.
#include "workloads/step/step_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/int_math.hpp"

namespace hopsim::work {
namespace {

constexpr double kWeightBytes = 2;      // BF16 weights
constexpr double kActivationBytes = 2;  // BF16 activations

// Parameters of one layer on one GPU that FP8 GEMMs read (StepShape's fp8 flags).
double layer_fp8_params(const StepShape& s, bool moe) {
  const LayerParams lp = layer_params(*s.model, moe);
  const ParallelSpec& p = s.parallel;
  double out = s.fp8_attention ? lp.attention / d(p.tp) : 0;
  if (moe) {
    out += (s.fp8_shared ? lp.shared_experts / d(p.tp) : 0) +
           (s.fp8_experts ? d(s.model->moe.routed_experts) * lp.expert / d(p.ep) : 0);
  } else if (s.fp8_mlp) {
    out += lp.mlp / d(p.tp);
  }
  return out;
}

// Saved activations of one layer for one micro-batch on one GPU (sequence parallelism splits
// every tensor over tp, context parallelism over cp); only its input when `input_only` (full
// recomputation rebuilds the rest).
double layer_activations(const StepShape& s, bool moe, bool input_only) {
  const ModelSpec& m = *s.model;
  const ParallelSpec& p = s.parallel;
  const double tokens = d(s.seq_len * s.micro_batch) / d(p.tp * p.cp);
  if (input_only) {
    return kActivationBytes * tokens * d(m.hidden);
  }
  return tokens * layer_bytes_per_token(s, moe);
}

// A step's model stages as memory counts them: each stage's parameters and layers, and one
// layer's parameters of each kind.
struct StageLayout {
  const StepShape* shape = nullptr;
  std::vector<StageParams> params;
  std::vector<std::int64_t> layers;
  std::vector<std::int64_t> first_layer;
  StageParams dense_layer;
  StageParams moe_layer;
};

// The layout of step `s`'s model stages.
StageLayout stage_layout(const StepShape& s) {
  const ModelSpec& m = *s.model;
  StageLayout out;
  out.shape = &s;
  out.params = stage_params(s);
  out.layers = stage_split(s);
  out.first_layer = first_layers(out.layers);
  out.dense_layer = layer_params_per_gpu(m, s.parallel, false);
  out.moe_layer = layer_params_per_gpu(m, s.parallel, true);
  return out;
}

// Saved activations of all of model stage `stage`'s layers for one micro-batch. Under full
// recomputation a layer it rebuilds keeps its input only, and uniform's groups only their
// first layer's input (recompute_method). Offloaded layers keep theirs in host memory, the
// largest of them once on the GPU (the layer being copied).
double stage_activations(const StageLayout& layout, int stage) {
  const StepShape& s = *layout.shape;
  const RecomputeSpec& r = s.recompute;
  const bool uniform = r.method == RecomputeMethod::Uniform;
  double bytes = 0;
  double in_flight = 0;
  const auto st = static_cast<std::size_t>(stage);
  for (std::int64_t l = 0; l < layout.layers[st]; ++l) {
    const bool moe = is_moe_layer(*s.model, layout.first_layer[st] + l);
    if (l < s.offload_layers) {
      in_flight = std::max(in_flight, layer_activations(s, moe, false));
    } else if (!full_rebuilds(r, l)) {
      bytes += layer_activations(s, moe, false);
    } else if (!uniform || l % r.layers == 0) {
      bytes += layer_activations(s, moe, true);
    }
  }
  return bytes + in_flight;
}

// The most activations full recomputation rebuilds at once on model stage `stage`: a uniform
// group's layers, or one of block's layers; 0 without full recomputation.
double stage_rebuilt(const StageLayout& layout, int stage) {
  const StepShape& s = *layout.shape;
  const RecomputeSpec& r = s.recompute;
  const auto st = static_cast<std::size_t>(stage);
  const std::int64_t group = r.method == RecomputeMethod::Uniform ? r.layers : 1;
  double most = 0;
  double rebuilt = 0;
  for (std::int64_t l = 0; l < layout.layers[st] && full_rebuilds(r, l); ++l) {
    rebuilt = l % group == 0 ? 0 : rebuilt;
    rebuilt += layer_activations(s, is_moe_layer(*s.model, layout.first_layer[st] + l), false);
    most = std::max(most, rebuilt);
  }
  return most;
}

// The most activations a rank holds at once over its order's `steps` (from activation_steps).
double peak_activations(const StageLayout& layout, const std::vector<std::pair<int, bool>>& steps) {
  double held = 0;
  double peak = 0;
  for (const auto& [stage, forward] : steps) {
    const double a = stage_activations(layout, stage);
    held += forward ? a : -a;
    peak = std::max(peak, held);
  }
  return peak;
}

// What one pipeline rank holds over its stages: parameters by kind, and its largest layer's.
struct RankParams {
  double vocab = 0;
  double dense = 0;  // the layers' (without the vocabulary's)
  double expert = 0;
  double rebuilt = 0;  // the most full recomputation rebuilds at once (stage_rebuilt)
  double largest = 0;  // the largest layer's parameters
  double fp8 = 0;      // the layers' parameters FP8 GEMMs read (layer_fp8_params)
  double largest_fp8 = 0;
  // The most activations one of its layers saves for a micro-batch: what a pair that walks
  // its two micro-batches' layers in step holds beyond its backward's micro-batch.
  double largest_activations = 0;
};

// Pipeline rank r's parameters, summed over its stages in order.
RankParams rank_params(const StageLayout& layout, int r) {
  const StepShape& s = *layout.shape;
  const ModelSpec& m = *s.model;
  RankParams out;
  for (const int stage : rank_stages(s, r)) {
    out.rebuilt = std::max(out.rebuilt, stage_rebuilt(layout, stage));
    out.vocab += vocab_params(s, stage);
    out.dense += layout.params[static_cast<std::size_t>(stage)].dense - vocab_params(s, stage);
    out.expert += layout.params[static_cast<std::size_t>(stage)].expert;
    for (std::int64_t l = 0; l < layout.layers[static_cast<std::size_t>(stage)]; ++l) {
      const bool moe = is_moe_layer(m, layout.first_layer[static_cast<std::size_t>(stage)] + l);
      const StageParams& lp = moe ? layout.moe_layer : layout.dense_layer;
      out.largest = std::max(out.largest, lp.dense + lp.expert);
      out.largest_activations =
          std::max(out.largest_activations, layer_activations(s, moe, false));
      const double fp8 = layer_fp8_params(s, moe);
      out.fp8 += fp8;
      out.largest_fp8 = std::max(out.largest_fp8, fp8);
    }
  }
  return out;
}

}  // namespace

// Elements one layer saves for its backward per token (Korthikanti et al.'s accounting, for a
// pre-norm layer without dropout, FlashAttention storing no scores): attention keeps its
// norm's input and output, Q, K, V and its output (the output projection's input); a dense
// MLP its norm's input and output, the gate and up projections and the SwiGLU output (the down
// projection's input); a MoE layer the same per shared expert and, per routed copy of the
// token, its expert input, gate, up and SwiGLU output (selective's modules drop what they
// rebuild: moe everything of the MoE part but its norm's output, shared_experts the shared
// experts' own). Llama 3 405B: 15.875 h elements (31.75
// h bytes) per token where GPT-3's constant is 34 h bytes.
SavedElements layer_saved(const ModelSpec& m, bool moe, std::uint8_t modules) {
  const double h = d(m.hidden);
  double q = d(m.heads * m.head_dim);
  double kv = 2 * d(m.kv_heads * m.head_dim);
  double out = q;
  double latents = 0;
  if (m.mla) {
    const MlaShape& a = m.mla_shape;
    const double q_heads = d(m.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim));
    const double kv_heads = d(m.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim));
    const bool up = has_module(modules, RecomputeModule::MlaUpProj);
    q = up ? 0 : q_heads;
    kv = up ? 0 : kv_heads;
    latents = d(a.q_lora_rank) + d(a.kv_lora_rank + a.qk_rope_head_dim);
    out = d(m.heads * a.v_head_dim);
  }
  SavedElements s;
  s.other = 2 * h + q + kv + out;  // both norms' inputs, Q, K, V, the attention output
  s.gemm_inputs = latents + (has_module(modules, RecomputeModule::LayerNorm) ? 0 : 2 * h);
  if (moe && !has_module(modules, RecomputeModule::Moe)) {  // moe: only its input, kept above
    const double fe = d(m.moe.expert_ffn_hidden);
    const double act = has_module(modules, RecomputeModule::MoeAct) ? 2 : 3;
    const double shared = has_module(modules, RecomputeModule::SharedExperts) ? 0 : act * fe;
    s.gemm_inputs += d(m.moe.shared_experts) * shared + d(m.moe.top_k) * (h + act * fe);
  } else if (!moe) {
    s.gemm_inputs += has_module(modules, RecomputeModule::Mlp) ? 0 : 3 * d(m.ffn_hidden);
  }
  return s;
}

double layer_bytes_per_token(const StepShape& s, bool moe) {
  const RecomputeSpec& r = s.recompute;
  const std::uint8_t modules = r.granularity == Recompute::Selective ? r.modules : 0;
  const SavedElements saved = layer_saved(*s.model, moe, modules);
  return kActivationBytes * saved.other + s.gemm_input_bytes * saved.gemm_inputs;
}

double layer_saved_elements(const ModelSpec& m, bool moe, std::uint8_t modules) {
  return layer_saved(m, moe, modules).total();
}

std::string recompute_label(const RecomputeSpec& r) {
  if (r.granularity == Recompute::Full && (r.method != RecomputeMethod::Uniform || r.layers != 1)) {
    return fmt::format("full ({}, {} layer{})", recompute_method_name(r.method), r.layers,
                       r.layers == 1 ? "" : "s");
  }
  if (r.granularity != Recompute::Selective) {
    return std::string(recompute_name(r.granularity));
  }
  std::string names;
  for (const auto& [module, name] : kRecomputeModules) {
    if (has_module(r.modules, module)) {
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
  }
  return "selective (" + names + ")";
}

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::Selective:
      return "selective";
    case Recompute::Full:
      return "full";
    case Recompute::None:
      break;
  }
  return "none";
}

std::string_view recompute_method_name(RecomputeMethod m) {
  return m == RecomputeMethod::Block ? "block" : "uniform";
}

bool layer_recomputed(const RecomputeSpec& r, std::int64_t k) {
  switch (r.granularity) {
    case Recompute::Selective:
      return true;
    case Recompute::Full:
      return r.method == RecomputeMethod::Uniform || k < r.layers;
    case Recompute::None:
      break;
  }
  return false;
}

bool full_rebuilds(const RecomputeSpec& r, std::int64_t k) {
  return r.granularity == Recompute::Full && layer_recomputed(r, k);
}

std::vector<std::int64_t> layers_per_stage(std::int64_t layers, int stages) {
  HOPSIM_ASSERT(stages >= 1 && layers >= stages, "{} layers over {} stages", layers, stages);
  std::vector<std::int64_t> out(static_cast<std::size_t>(stages), layers / stages);
  std::int64_t extra = layers % stages;
  // The middle stages first, then the first, then the last.
  std::vector<int> order;
  for (int s = 1; s + 1 < stages; ++s) {
    order.push_back(s);
  }
  order.push_back(0);
  if (stages > 1) {
    order.push_back(stages - 1);
  }
  for (int s : order) {
    if (extra == 0) {
      break;
    }
    ++out[static_cast<std::size_t>(s)];
    --extra;
  }
  return out;
}

PipeShape pipe_shape(const StepShape& s) {
  return {static_cast<int>(s.parallel.pp), static_cast<int>(s.micro_batches), s.chunks, s.group};
}

int model_stages(const StepShape& s) {
  return s.schedule->stages(pipe_shape(s));
}

std::vector<int> rank_stages(const StepShape& s, int rank) {
  return s.schedule->rank_stages(pipe_shape(s), rank);
}

std::vector<int> sharing_ranks(const StepShape& s, int rank) {
  const std::vector<int> own = rank_stages(s, rank);
  std::vector<int> out{rank};
  for (int q = 0; q < static_cast<int>(s.parallel.pp); ++q) {
    const std::vector<int> held = rank_stages(s, q);
    const bool shares = std::ranges::any_of(
        held, [&](int stage) { return std::ranges::find(own, stage) != own.end(); });
    if (q != rank && shares) {
      out.push_back(q);
    }
  }
  return out;
}

std::vector<std::int64_t> first_layers(const std::vector<std::int64_t>& layers_per_stage) {
  std::vector<std::int64_t> out(layers_per_stage.size(), 0);
  for (std::size_t s = 1; s < out.size(); ++s) {
    out[s] = out[s - 1] + layers_per_stage[s - 1];
  }
  return out;
}

std::vector<std::int64_t> stage_split(const StepShape& s) {
  if (!s.stage_layers.empty()) {
    return s.stage_layers;
  }
  return layers_per_stage(trained_layers(*s.model), model_stages(s));
}

bool is_moe_layer(const ModelSpec& m, std::int64_t index) {
  return m.moe.routed_experts > 0 && index >= m.moe.first_dense_layers;
}

std::vector<StageParams> stage_params(const StepShape& s) {
  const ModelSpec& m = *s.model;
  const ParallelSpec& p = s.parallel;
  const int stages = model_stages(s);
  const std::vector<std::int64_t> layers = stage_split(s);
  const StageParams dense = layer_params_per_gpu(m, p, false);
  const StageParams sparse = layer_params_per_gpu(m, p, true);
  std::vector<StageParams> out(static_cast<std::size_t>(stages));
  std::int64_t index = 0;
  for (int st = 0; st < stages; ++st) {
    StageParams& sp = out[static_cast<std::size_t>(st)];
    for (std::int64_t l = 0; l < layers[static_cast<std::size_t>(st)]; ++l, ++index) {
      const StageParams& layer = is_moe_layer(m, index) ? sparse : dense;
      sp.dense += layer.dense;
      sp.expert += layer.expert;
    }
    sp.dense += vocab_params(s, st);
  }
  return out;
}

StageParams layer_params_per_gpu(const ModelSpec& m, const ParallelSpec& p, bool moe) {
  const LayerParams lp = layer_params(m, moe);
  StageParams out;
  out.dense = (lp.attention + lp.norms + lp.mlp + lp.router + lp.shared_experts) / d(p.tp);
  out.expert = moe ? d(m.moe.routed_experts) * lp.expert / d(p.ep) : 0;
  return out;
}

double layer_activation_bytes(const StepShape& s, bool moe) {
  return layer_activations(s, moe, false);
}

double vocab_params(const StepShape& s, int stage) {
  const ModelSpec& m = *s.model;
  const double vocab = d(m.vocab) * d(m.hidden) / d(s.parallel.tp);  // vocab-parallel over TP
  double out = 0;
  if (stage == 0) {
    out += vocab;
  }
  if (stage == model_stages(s) - 1) {
    out += vocab + d(m.hidden);  // the head (a copy when tied) and the final norm
    // Each MTP module's projection (2 h -> h, split over TP) and three norms; its block is a
    // layer of the stage, its head and embedding are the model's (DeepSeek-V3 shares them).
    out += d(m.mtp_depth) * (2 * d(m.hidden) * d(m.hidden) / d(s.parallel.tp) + 3 * d(m.hidden));
  }
  return out;
}

StageParams dp_shards(const StepShape& s) {
  const ParallelSpec& p = s.parallel;
  if (s.zero < 1) {
    return {1, 1};
  }
  return {d(p.dp * p.cp), d(p.tp * p.cp * p.dp) / d(p.ep)};
}

std::vector<StageMemory> stage_memory(const StepShape& s) {
  const ModelSpec& m = *s.model;
  const ParallelSpec& p = s.parallel;
  const int ranks = static_cast<int>(p.pp);
  const StageLayout layout = stage_layout(s);
  const StageParams shard = dp_shards(s);
  const bool walks = s.schedule->pair_walks_layers;
  const std::vector<std::vector<std::pair<int, bool>>> steps =
      activation_steps(schedule_order(*s.schedule, pipe_shape(s)), walks);
  std::vector<StageMemory> out(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    StageMemory& mem = out[static_cast<std::size_t>(r)];
    const RankParams rp = rank_params(layout, r);
    const double vocab = rp.vocab;
    const double dense = rp.dense;
    const double expert = rp.expert;
    const double largest = rp.largest;
    const double sharded = dense / shard.dense + expert / shard.expert;
    if (s.zero >= 3) {
      // The layers' shards, the vocabulary whole; the gathered layer and the one prefetched,
      // and one layer's full gradient until its reduce-scatter.
      mem.params = kWeightBytes * (vocab + sharded + 2 * largest);
      mem.grads = s.grad_bytes * (vocab + sharded + largest);
    } else {
      mem.params = kWeightBytes * (vocab + dense + expert);
      mem.grads = s.grad_bytes * (vocab + dense + expert);
    }
    mem.optimizer = s.optimizer_bytes() * (vocab / shard.dense + sharded);
    mem.fp8_weights = s.fp8_copy_bytes * (s.zero >= 3 ? 2 * rp.largest_fp8 : rp.fp8);
    mem.reserve = s.context_bytes + s.communicator_bytes * communicators(s);
    mem.activations = peak_activations(layout, steps[static_cast<std::size_t>(r)]) + rp.rebuilt +
                      (walks ? rp.largest_activations : 0.0);
    if (m.moe.routed_experts > 0) {
      const double tokens = d(s.seq_len * s.micro_batch) / d(p.tp * p.cp);
      mem.buffers = tokens * d(m.moe.top_k) * d(m.hidden) * 3;  // FP8 in, BF16 out
    }
  }
  return out;
}

int communicators(const StepShape& s) {
  const ParallelSpec& p = s.parallel;
  const bool moe = s.model->moe.routed_experts > 0;
  const std::int64_t groups[] = {p.tp, p.cp,           p.dp * p.cp,
                                 p.pp, moe ? p.ep : 1, moe ? p.tp * p.cp * p.dp / p.ep : 1};
  int n = 0;
  for (const std::int64_t size : groups) {
    n += size > 1 ? 1 : 0;
  }
  return n;
}

double model_flops_per_token(const ModelSpec& m, std::int64_t seq_len, double attended_pairs) {
  const double input_embedding = m.tied_embeddings ? 0 : d(m.vocab) * d(m.hidden);
  return 6 * (active_params(m) - input_embedding) +
         attention_flops_per_token(m, 1) * attended_pairs / d(seq_len);
}

}  // namespace hopsim::work
