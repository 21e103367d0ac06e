// The reference of experiment files: the experiment, its parallel mesh, and each workload kind.
#include "tools/config/schema_tables.hpp"

#include <span>
#include <string>
#include <string_view>

#include "workloads/collectives/algorithms.hpp"
#include "workloads/cp/cp_algorithms.hpp"

namespace hopsim::config::tables {
namespace {

// The collective ops and algorithms as their table has them (workloads/collectives).
const std::string kOpNames = work::quoted_op_names();
const std::string kAlgorithmNames = work::quoted_algorithm_names();
const std::string kAlgorithmsByOp = work::algorithms_by_op();
const std::string kAllToAllNames = work::algorithms_of(work::CollectiveOp::AllToAll);
// The EP exchanges as their table has them (workloads/collectives/ep_algorithms.hpp).
const std::string kEpNames = work::ep_algorithm_list(nullptr, true);
const std::string kEpAlgorithmsDoc =
    "how dispatch and combine run: " + work::ep_algorithms_described();
// The CP algorithms as their table has them (workloads/cp/cp_algorithms.hpp).
const std::string kCpNames = work::cp_algorithm_list(nullptr, true, " or ");
const std::string kCpAlgorithmsDoc = work::cp_algorithms_described();

// The entry of `key` in `table`: a key two sections share, documented once.
KeyDoc shared(std::span<const KeyDoc> table, std::string_view key) {
  for (const KeyDoc& k : table) {
    if (k.name == key) {
      return k;
    }
  }
  return {key, "?", "?", "(undocumented)"};  // a test keeps every entry documented
}

}  // namespace

const std::array<KeyDoc, 11> kExperiment{{
    {"name", "string", "the file's name", "names the experiment in reports"},
    {"description", "string", "none", "free text"},
    {"cluster", "string or object", "required",
     "a preset name (hopsim list), a cluster file (path relative to this file) or the "
     "cluster inline"},
    {"model", "string or object", "none",
     "a preset name, a model file or the model inline; needed by the layer kinds"},
    {"calibration", "string", "none (roofline only)",
     "a preset name or a calibration table file for the compute model; \"auto\": the shipped "
     "table for the cluster's GPU, else the nearest one scaled to it; \"none\": the roofline"},
    {"parallel", "object", "all degrees 1", "the rank mesh: parallel degrees and their order"},
    {"workload", "object", "required",
     "what to simulate; \"kind\" picks one of the sections below"},
    {"seed", "integer in [0, 2^63)", "1",
     "seeds every random draw (MoE routing); same seed, same report"},
    {"validation", "object", "none", "a published figure the run is compared with (collective)"},
    {"solver", "object", "exact", "the flow solver: exact max-min rates, or its approximate mode"},
    {"perturbations", "array of objects", "none",
     "what-ifs off the healthy cluster: GPUs that compute slower, NVLink, NIC or spine links "
     "that carry less, take longer or fail (docs/what-ifs.md); a folded training step "
     "measures the layer groups and stages they touch"},
}};

const std::array<KeyDoc, 14> kPerturbation{{
    {"gpus", "array of GPU ranks", "one of gpus, nodes, rails unless stragglers or spine links",
     "the GPUs it applies to, each in the cluster"},
    {"nodes", "array of node indices", "none", "instead of gpus: every GPU of these nodes"},
    {"rails", "array of local GPU indices", "none",
     "instead of gpus: the GPU of this index on every node (its rail's NICs, with links nic)"},
    {"stragglers", "number in (0, 1]", "none",
     "instead of gpus: this share of the GPUs the workload runs on (at least one), drawn with "
     "the experiment's seed, each at a compute_speed drawn uniformly from its [min, max]"},
    {"links", "\"nvlink\", \"nic\" or \"spine\"", "none (their compute)",
     "which of their links it changes, both directions; without it, their compute; \"spine\": "
     "the links between leaves and spines, named by leaves and spines"},
    {"leaves", "array of leaf indices", "every leaf",
     "with links spine: the leaves whose links to the spines change"},
    {"spines", "array of spine indices", "every spine",
     "with links spine: the spines whose links to the leaves change"},
    {"compute_speed", "number in [0.1, 10]; with stragglers [min, max]", "1",
     "their kernels at this share of the compute model's rate (0.95: 5% slow); without links"},
    {"kernel_speed", "[min, max], each in [0.1, 10]", "none",
     "without links: each of their kernels also at its own share of the rate, drawn uniformly "
     "from [min, max] with the experiment's seed (jitter); a folded step takes each kernel at "
     "the range's harmonic mean"},
    {"bandwidth", "number in [0.01, 10]", "1",
     "their links at this share of their rate (0.5: a NIC trained down to half); with links"},
    {"extra_latency_us", "number in [0, 10^6]", "0",
     "microseconds every flow on their links pays more; with links"},
    {"gpu", "cluster preset or file", "none",
     "with nodes only: their GPUs are that cluster's GPU model (a mixed cluster); their kernels "
     "run at that model's rate over the cluster GPU's, per kernel class, each model's priced by "
     "its own calibration over the workload's kernels"},
    {"calibration", "\"auto\", \"none\" or a calibration file", "the experiment's way",
     "with gpu: the table the nodes' GPU model is priced by (\"auto\" unless the experiment "
     "has no calibration)"},
    {"failed", "boolean", "false",
     "with links: they carry nothing, and traffic detours (a failed NIC's over NVLink through "
     "the next GPU's NIC, a failed NVLink's through the NICs, ECMP over the spines left); a "
     "partition is an error"},
}};

const std::array<KeyDoc, 1> kSolver{{
    {"tolerance", "number in [0, 0.1]", "0 (exact)",
     "approximate mode: a flow may end when it is within this share of its size of its end, "
     "at the wake nearest its end, so that flows ending close together share one re-solve; "
     "the report's sim section says which mode ran (docs/network-model.md has its measured "
     "errors)"},
}};

const std::array<KeyDoc, 7> kParallel{{
    {"tp", "integer in [1, 2^24]", "1", "tensor-parallel degree; a TP group must fit in a node"},
    {"cp", "integer in [1, 2^24]", "1", "context-parallel degree"},
    {"pp", "integer in [1, 2^24]", "1", "pipeline-parallel degree"},
    {"dp", "integer in [1, 2^24]", "1", "data-parallel degree; tp x cp x pp x dp must divide the GPUs"},
    {"ep", "integer in [1, 2^24]", "1",
     "expert-parallel degree, taken from tp x cp x dp (which it must divide)"},
    {"order", "array of \"tp\", \"cp\", \"pp\", \"dp\"", "[\"tp\", \"cp\", \"pp\", \"dp\"]",
     "the mesh order, innermost (consecutive ranks) first"},
    {"tp_across_nodes", "boolean", "false", "allow TP groups that span nodes"},
}};

const std::array<KeyDoc, 4> kValidation{{
    {"metric",
     "\"busbw_GBps\", \"time_s\", \"deepep_rdma_GBps\", \"deepep_nvl_GBps\", "
     "\"model_tflops_per_gpu\" or \"tokens_per_s_per_gpu\"",
     "required", "the collective row's value compared (DeepEP's: moe all-to-all); an attention, "
                 "MoE or transformer layer's: time_s (the whole run); a training step's: "
                 "model_tflops_per_gpu or tokens_per_s_per_gpu"},
    {"bytes", "integer in [1, 2^63)", "required for a collective",
     "the size (one of the workload's) whose row is compared"},
    {"published", "number in (0, 1e12]", "required", "the published figure, in the metric's unit"},
    {"source", "string", "required", "where the published figure comes from"},
}};

const std::array<KeyDoc, 2> kFlowsWorkload{{
    {"kind", "\"flows\"", "required", "explicit flows between GPUs"},
    {"flows", "array of objects", "required", "at least one flow"},
}};

const std::array<KeyDoc, 6> kChakraWorkload{{
    {"kind", "\"chakra\"", "required", "replays a Chakra execution trace"},
    {"trace", "string", "required",
     "the trace's files, relative to this file: a prefix (DIR/NAME for DIR/NAME.0.et, "
     "DIR/NAME.1.et, ...), one of its files, or a folder holding one such family"},
    {"gpus", "array of integers", "rank r on GPU r", "the GPU of each trace rank, in rank order"},
    {"groups", "object of arrays of integers", "{}",
     "the trace ranks of each process group a collective names (its pg_name), in ring order; "
     "a collective without pg_name runs over every rank"},
    {"compute", "\"recorded\" or \"model\"", "\"recorded\"",
     "a kernel's time: its duration_micros, or the GPU's roofline from its num_ops (FLOPs) and "
     "tensor_size (bytes)"},
    {"algorithms", "object", "NCCL's tuner; all_to_all flat",
     "the algorithm of each collective op (keys below)"},
}};

const std::array<KeyDoc, 4> kChakraAlgorithms{{
    {"all_reduce", "\"ring\", \"tree\", \"nvls\" or \"auto\"", "\"auto\"",
     "all-reduce and barrier"},
    {"all_gather", "\"ring\", \"direct\" or \"auto\"", "\"auto\"", "all-gather"},
    {"reduce_scatter", "\"ring\" or \"auto\"", "\"auto\"", "reduce-scatter"},
    {"all_to_all", kAllToAllNames, "\"flat\"",
     "all-to-all (NCCL runs it flat: one send/recv per pair)"},
}};

const std::array<KeyDoc, 6> kFlow{{
    {"id", "string", "its index", "names the flow in reports, traces and \"after\""},
    {"src", "integer in [0, 2^24]", "required", "sending GPU (global rank)"},
    {"dst", "integer in [0, 2^24]", "required", "receiving GPU; not src"},
    {"bytes", "integer in [0, 2^63)", "required", "bytes to move"},
    {"start_us", "number in [0, 1e12]", "0", "earliest start, microseconds"},
    {"after", "array of ids", "[]", "flows that must finish first"},
}};

const std::array<KeyDoc, 13> kCollectiveWorkload{{
    {"kind", "\"collective\"", "required", "one collective, nccl-tests style"},
    {"op", kOpNames, "required", "the collective"},
    {"algorithm", kAlgorithmNames, "\"flat\" for all_to_all, else \"ring\"", kAlgorithmsByOp},
    {"ranks", "array of integers in [0, 2^24]", "every GPU",
     "GPUs in ring order, at least 2, distinct; send_recv takes exactly 2"},
    {"group", "\"tp\", \"cp\", \"pp\", \"dp\", \"ep\"", "none",
     "instead of ranks: run in every group of this mesh dimension at once"},
    {"bytes", "integer in [1, 2^61), an array of them, or {min, max, factor}", "required unless moe",
     "bytes per rank (all_gather: output), one case per size"},
    {"chunks", "integer in [1, 1024]", "ring 1, tree pieces of 512 KiB (at most 32), two_tier 1",
     "pipelined pieces: per ring step, per tree, per InfiniBand transfer (two_tier without moe)"},
    {"channels", "integer in [1, 64]", "one per GPU of a node across nodes, else 1",
     "ring, tree: rings (trees) in parallel, rail-aligned, each with its share of the data"},
    {"protocol", "\"simple\", \"ll\", \"ll128\" or \"auto\"", "the cluster's nccl.protocol",
     "NCCL protocol: its latencies and its payload share of the wire bytes; auto: NCCL's tuner "
     "picks per size"},
    {"combine", "boolean", "false",
     "all_to_all: the reverse exchange (DeepEP's combine; flat sends each pair's bytes back)"},
    {"chunk_tokens", "integer in [0, 2^20]", "DeepEP's for the EP size",
     "two_tier with moe: tokens per InfiniBand piece, forwarded as it lands; 0: one piece"},
    {"pieces", "\"each\" or \"streamed\"", "\"each\"",
     "two_tier: every piece its own flows (DeepEP's kernels), or streamed: per node pair the "
     "first piece, the rest, and the last piece's second stage (16 flows, not 8 per piece)"},
    {"moe", "object", "none", "all_to_all only: route MoE tokens instead of a uniform matrix"},
}};

const std::array<KeyDoc, 3> kSizeRange{{
    {"min", "integer in [1, 2^61)", "required", "smallest size, bytes"},
    {"max", "integer in [min, 2^61)", "required", "largest size, bytes"},
    {"factor", "integer in [2, 1024]", "required", "each size is the previous times this"},
}};

const std::array<KeyDoc, 11> kCollectiveMoe{{
    {"tokens_per_gpu", "integer in [1, 2^20]", "required", "tokens each GPU routes"},
    {"experts", "integer in [1, 2^20]", "required", "routed experts, spread evenly over the ranks"},
    {"top_k", "integer in [1, 2^20]", "required", "distinct experts per token"},
    {"max_nodes_per_token", "integer in [0, 2^20]", "4", "nodes a token may reach; 0: no limit"},
    {"hidden", "integer in [1, 2^24]", "required", "elements of a token's hidden state"},
    {"bytes_per_element", "number in (0, 64]", "2", "bytes per element on the wire (FP8 with "
                                                    "scales: 1.03125)"},
    {"seed", "integer in [0, 2^63)", "the experiment's seed", "seeds the routing draw"},
    {"distribution", "\"uniform\", \"zipf\", \"dirichlet\" or \"counts\"", "\"uniform\"",
     "expert popularity: all alike; Zipf's law over a seeded ranking of the experts; weights "
     "drawn from a symmetric Dirichlet (seeded); or a router's per-expert counts"},
    {"zipf_s", "number in [0, 8]", "1", "zipf: the r-th most popular expert weighs 1 / r^s"},
    {"alpha", "number in [0.001, 1000]", "1",
     "dirichlet: the concentration; below 1 a few experts take most tokens, large is even"},
    {"counts", "array of numbers >= 0, or a file name", "required with counts",
     "counts: one number per routed expert (a router's histogram), in proportion to which "
     "experts are chosen; a string names a JSON file beside the config holding the array"},
}};

const std::array<KeyDoc, 17> kAttentionLayerWorkload{{
    {"kind", "\"attention_layer\"", "required",
     "one transformer layer's attention (or with mlp the whole dense layer) under TP and CP"},
    {"seq_len", "integer in [1, 2^31]", "required",
     "new tokens per sequence; cp (contiguous) or 2 x cp (zigzag) must divide it"},
    {"micro_batch", "integer in [1, 2^20]", "1", "sequences per micro-batch"},
    {"mask", "\"causal\", \"full\" or \"document\"", "\"causal\"",
     "attention mask; document: causal inside each packed document"},
    {"documents", "array of integers in [1, 2^31]", "none",
     "mask document: the packed documents' lengths, summing to seq_len"},
    {"document_mean_tokens", "integer in [1, 2^31]", "none",
     "mask document: draw lengths from an exponential distribution of this mean (seeded)"},
    {"cached_tokens", "integer in [0, 2^31]", "0",
     "prefill: tokens already in the KV cache before the new ones (ring, ring_pass_q)"},
    {"request_overhead_ms", "number in [0, 1e6]", "0",
     "prefill only: what a request costs beyond its layers (the serving stack's fixed part), "
     "paid on every GPU before the first layer (docs/context-parallelism.md)"},
    {"mlp", "boolean", "false", "also the dense SwiGLU MLP: the whole layer"},
    {"layers", "integer in [1, 2^20]", "1", "identical layers run one after another"},
    {"mode", "\"training\" or \"prefill\"", "\"training\"",
     "prefill: inference time to first token (forward only)"},
    {"passes", "\"forward\", \"backward\" or \"both\"", "training: both; prefill: forward",
     "which passes run (backward: the layers in reverse after the forward ones)"},
    {"dtype", "\"bf16\" or \"fp8\"", "\"bf16\"",
     "attention, its projections, and K/V on the wire"},
    {"mlp_dtype", "\"bf16\" or \"fp8\"", "dtype", "the MLP's GEMMs"},
    {"cp", "object", "ring, zigzag", "the context-parallel algorithm"},
    {"fp8_recipe", "\"cast_transpose\" or \"deepseek\"", "\"cast_transpose\"",
     "how FP8 GEMMs' inputs and output gradients are cast, by the bytes the casts move per "
     "element: cast_transpose is Transformer Engine's fused cast with the transposed copy (4 "
     "forward, 4 backward); deepseek is DeepSeek-V3's per-token and per-channel casts with the "
     "cached FP8 input cast back before the weight gradient (3 forward; 6 + 6 backward; "
     "docs/compute-model.md#kernel-classes), and with it an MLA model's projections each its "
     "own FP8 GEMM (DeepSeek-V3 quantizes every linear layer but embedding, head and router)"},
    {"attention_kernel", "\"auto\", \"fa2\", \"fa3\" or \"cudnn\"", "\"auto\"",
     "the attention kernel the framework runs: only calibration tables of that impl answer, and "
     "the roofline takes its published rates by call size (auto: any table, FlashAttention-3's "
     "rates; PyTorch SDPA's flash backend is fa2)"},
}};

const std::array<KeyDoc, 4> kAttentionCp{{
    {"algorithm", kCpNames, "\"ring\"", kCpAlgorithmsDoc},
    {"balance", "\"contiguous\" or \"zigzag\"", "\"zigzag\"",
     "contiguous: rank i holds chunk i; zigzag: 2 x cp chunks, rank i holds i and 2cp-1-i"},
    {"ulysses_degree", "integer in [1, 2^24]", "cp",
     "ulysses: ranks per all-to-all group; a pass-KV ring runs over cp / this"},
    {"replicate_kv", "boolean", "false",
     "ulysses with more ranks than KV heads: each rank receives a copy of its KV head"},
}};

const std::array<KeyDoc, 22> kMoeLayerWorkload{{
    {"kind", "\"moe_layer\"", "required",
     "one MoE layer under EP: attention and router, dispatch, experts, combine"},
    {"tokens_per_gpu", "integer in [1, 2^24]", "required", "tokens each GPU routes"},
    {"top_k", "integer in [1, 2^20]", "the model's", "experts per token"},
    {"max_nodes_per_token", "integer in [0, 2^20]", "the model's", "nodes a token may reach; 0: no limit"},
    {"dispatch_bytes_per_element", "number in (0, 64]", "1", "dispatch payload (FP8: 1; with scales "
                                                      "1.03125); also the gradients sent to the "
                                                      "experts in backward"},
    {"combine_bytes_per_element", "number in (0, 64]", "2", "combine payload (BF16: 2); also the "
                                                     "gradients sent back in backward"},
    {"routing", "object", "uniform", "expert popularity (distribution, zipf_s) and the balancer"},
    {"capacity_factor", "number in [0.01, 1000]", "none",
     "an expert takes at most this times its even share of the group's selections; the rest "
     "are dropped (counted in the report)"},
    {"algorithm", kEpNames, "\"two_tier\"", kEpAlgorithmsDoc},
    {"passes", "\"forward\", \"backward\" or \"both\"", "\"forward\" (dualpipe_pair: \"both\")",
     "which passes run (backward: exchanges in the same two directions, GEMMs at twice the "
     "FLOPs)"},
    {"overlap", "\"none\", \"two_microbatch\" or \"dualpipe_pair\"", "\"none\"",
     "two_microbatch: the tokens split in two (the halves of one sequence: the second's attention "
     "also reads the first's keys); one half's exchanges run while the other computes; "
     "dualpipe_pair: a forward chunk of one micro-batch against a backward chunk of another, "
     "layer by layer, as in DualPipe"},
    {"comm_sms", "integer in [0, SMs)", "0",
     "SMs the communication kernels hold; compute runs on the rest, slower in proportion"},
    {"attention", "boolean", "true", "the attention part before the router (its compute)"},
    shared(kAttentionLayerWorkload, "attention_kernel"),
    shared(kAttentionLayerWorkload, "fp8_recipe"),
    {"layers", "integer in [1, 2^20]", "1",
     "identical layers in a row; a micro-batch's next layer starts when its combine has landed"},
    {"repeat_layers", "boolean", "true",
     "over 12 layers: when 2, 3 and 4 layers show a steady schedule (the fourth adds what the "
     "third did), simulate 4 and repeat the last one's figures for the rest; false: simulate "
     "every layer"},
    {"recompute_modules", "array of \"core_attn\", \"layernorm\", \"mlp\", \"moe_act\", "
     "\"mla_up_proj\"", "none",
     "a backward's selective recomputation (as a training step's): each backward layer runs "
     "these forward kernels again first, the attention part's before its backward, the "
     "SwiGLUs before the experts' (mla_up_proj: the up-projections' share of the forward GEMMs, "
     "rotary and MLA's layout copies; mlp has no kernels in a MoE layer); needs a backward"},
    {"chunk_tokens", "integer in [1, 2^24]", "DeepEP's for the EP size",
     "two_tier: tokens per InfiniBand piece, forwarded over NVLink as it lands"},
    {"pieces", "\"streamed\" or \"each\"", "\"streamed\"",
     "two_tier: per node pair the first piece, the rest, and the last piece's second stage as "
     "flows (16; DeepSeek-V3 layers within about 1% of each); each: every piece its own flows, "
     "as DeepEP sends them"},
    {"redundant_experts", "integer in [0, 2^20], a multiple of ep", "0",
     "copies of the hottest experts (by the routing's popularity) in extra slots, as many on "
     "every GPU of an EP group; a token goes to the copy with the fewest selections so far"},
    {"placement", "array of arrays of expert ids", "even",
     "which experts each rank of every EP group hosts (one list per rank; an expert on two "
     "ranks has two copies); every expert on some rank"},
}};

const std::array<KeyDoc, 8> kMoeRouting{{
    {"distribution", "\"uniform\", \"zipf\", \"dirichlet\" or \"counts\"", "\"uniform\"",
     "expert popularity: all alike; Zipf's law over a seeded ranking of the experts; weights "
     "drawn from a symmetric Dirichlet (seeded); or a router's per-expert counts"},
    {"zipf_s", "number in [0, 8]", "1", "zipf: the r-th most popular expert weighs 1 / r^s"},
    {"alpha", "number in [0.001, 1000]", "1",
     "dirichlet: the concentration; below 1 a few experts take most tokens, large is even"},
    {"counts", "array of numbers >= 0, or a file name", "required with counts",
     "counts: one number per routed expert (a router's histogram), in proportion to which "
     "experts are chosen; a string names a JSON file beside the config holding the array"},
    {"balancer", "\"none\", \"bias\" or \"aux_loss\"", "\"none\"",
     "bias: DeepSeek-V3's per-expert routing bias, nudged against each expert's load after every "
     "training step, simulated over steps before the layer; aux_loss: an auxiliary balance loss, "
     "modelled as a share weight / (weight + 0.01) of every expert's weight made even"},
    {"steps", "integer in [1, 10000]", "50", "bias: training steps before the simulated one"},
    {"bias_update", "number in [1e-6, 1]", "0.05",
     "bias: gamma, added to (underloaded) or taken from (overloaded) an expert's log weight"},
    {"aux_loss_weight", "number in [0, 100]", "0.01",
     "aux_loss: the loss's weight; at 0.01 half of each expert's weight above or below even "
     "remains"},
}};


const std::array<KeyDoc, 16> kTransformerLayerWorkload{{
    {"kind", "\"transformer_layer\"", "required",
     "transformer layers: attention under TP and CP, then the feed-forward part (a dense MLP, or "
     "a MoE under EP)"},
    {"seq_len", "integer in [1, 2^31]", "required",
     "new tokens per sequence; cp (contiguous) or 2 x cp (zigzag) must divide it, and with a "
     "MoE cp x tp must divide seq_len x micro_batch"},
    shared(kAttentionLayerWorkload, "micro_batch"),
    shared(kAttentionLayerWorkload, "mask"),
    shared(kAttentionLayerWorkload, "documents"),
    shared(kAttentionLayerWorkload, "document_mean_tokens"),
    shared(kAttentionLayerWorkload, "layers"),
    shared(kAttentionLayerWorkload, "mode"),
    {"passes", "\"forward\", \"backward\" or \"both\"", "training: both; prefill: forward",
     "which passes run (backward: MoE part, then attention, layers in reverse)"},
    shared(kAttentionLayerWorkload, "dtype"),
    {"mlp_dtype", "\"bf16\" or \"fp8\"", "dtype", "a dense MLP's GEMMs"},
    {"cp", "object", "ring, zigzag", "the context-parallel algorithm (as for attention_layer)"},
    shared(kAttentionLayerWorkload, "attention_kernel"),
    shared(kAttentionLayerWorkload, "fp8_recipe"),
    {"ffn", "\"dense\" or \"moe\"", "moe when the model has routed experts",
     "the feed-forward part: the model's dense SwiGLU MLP (ffn_hidden), or its MoE under EP"},
    {"moe", "object", "the model's routing, two_tier",
     "the MoE part's routing and exchanges; checked, but not used, when ffn is dense"},
}};

// The MoE part's keys mean what they mean for moe_layer.
const std::array<KeyDoc, 12> kTransformerMoe{{
    shared(kMoeLayerWorkload, "top_k"),
    shared(kMoeLayerWorkload, "max_nodes_per_token"),
    shared(kMoeLayerWorkload, "dispatch_bytes_per_element"),
    shared(kMoeLayerWorkload, "combine_bytes_per_element"),
    shared(kMoeLayerWorkload, "routing"),
    shared(kMoeLayerWorkload, "capacity_factor"),
    shared(kMoeLayerWorkload, "algorithm"),
    shared(kMoeLayerWorkload, "comm_sms"),
    shared(kMoeLayerWorkload, "chunk_tokens"),
    shared(kMoeLayerWorkload, "pieces"),
    shared(kMoeLayerWorkload, "redundant_experts"),
    shared(kMoeLayerWorkload, "placement"),
}};

// The layers' keys mean what they mean for transformer_layer; the rest are the step's.
const std::array<KeyDoc, 30> kTrainingStepWorkload{{
    {"kind", "\"training_step\"", "required",
     "one training step of the whole model: every layer forward and backward over the "
     "micro-batches of a global batch, the pipeline schedule, gradient sync, optimizer"},
    shared(kTransformerLayerWorkload, "seq_len"),
    shared(kAttentionLayerWorkload, "micro_batch"),
    shared(kAttentionLayerWorkload, "mask"),
    shared(kAttentionLayerWorkload, "documents"),
    shared(kAttentionLayerWorkload, "document_mean_tokens"),
    shared(kAttentionLayerWorkload, "dtype"),
    shared(kTransformerLayerWorkload, "mlp_dtype"),
    shared(kTransformerLayerWorkload, "cp"),
    shared(kAttentionLayerWorkload, "attention_kernel"),
    shared(kAttentionLayerWorkload, "fp8_recipe"),
    shared(kTransformerLayerWorkload, "ffn"),
    shared(kTransformerLayerWorkload, "moe"),
    {"global_batch", "integer in [1, 2^31]", "required",
     "sequences per step over all DP replicas; dp x micro_batch must divide it (micro-batches "
     "per pipeline = global_batch / (dp x micro_batch))"},
    {"schedule", "\"1f1b\", \"interleaved\", \"dualpipe\" or \"auto\"", "\"1f1b\"",
     "the pipeline schedule: 1F1B, Megatron's interleaved 1F1B (micro-batches a multiple "
     "of pp), or DeepSeek-V3's bidirectional DualPipe (pp even, micro-batches even and at least "
     "2 x pp; two stages per rank; folded only); auto simulates 1f1b, interleaved with 2 to 8 "
     "virtual stages and dualpipe, keeps the fastest whose memory fits and reports every one "
     "tried (`schedules_tried`) with its step time or why it was rejected"},
    {"virtual_stages", "integer in [1, 1024]", "1f1b: 1; interleaved: 2",
     "model chunks per pipeline rank; pp x virtual_stages must not exceed the model's layers"},
    {"microbatch_group", "integer in [1, 100000]", "pp",
     "interleaved only: micro-batches that go through a chunk together before the next chunk "
     "(Megatron's order: pp; fewer is Meta's Llama 3 variant, N in its paper: fewer "
     "micro-batches in flight, so less activation memory, for a larger bubble; micro-batches "
     "need not be a multiple of it). A group too small for the order to finish is an error"},
    {"zero", "0, 1 or 3", "1",
     "0: gradients all-reduced, every DP rank holds all optimizer states; 1: reduce-scatter, "
     "optimizer states sharded over DP, updated parameters all-gathered; 3: parameters and "
     "gradients sharded too, each layer gathered before every forward and backward (prefetched "
     "one layer ahead) and reduce-scattered after every backward (docs/training-step.md); not "
     "with `dualpipe`"},
    {"recompute", "\"none\", \"selective\" or \"full\"", "\"none\"",
     "activation recomputation (Megatron's --recompute-granularity): full keeps each layer's "
     "input only and runs its forward again before its backward; selective runs "
     "recompute_modules again before each backward and does not keep what they made"},
    {"recompute_modules", "array of \"core_attn\", \"layernorm\", \"mlp\", \"moe_act\", "
     "\"mla_up_proj\"", "[\"core_attn\"]",
     "selective only (Megatron's --recompute-modules): core_attn saves nothing with "
     "FlashAttention and costs the attention forward; layernorm drops both norms' outputs (2 h "
     "per token) for their forwards; mlp a dense MLP's gate, up and SwiGLU outputs (3 ffn) for "
     "its forward GEMMs and SwiGLU; moe_act the experts' SwiGLU outputs for their SwiGLU; "
     "mla_up_proj MLA's per-head queries, keys and values for the up-projection GEMMs "
     "(docs/training-step.md#memory)"},
    {"recompute_method", "\"uniform\" or \"block\"", "\"uniform\"",
     "full only (Megatron's --recompute-method), per model stage (a chunk under interleaving): "
     "uniform keeps the input of every group of recompute_num_layers layers and runs the "
     "group's forward again before its backward; block keeps only the input of the stage's "
     "first recompute_num_layers layers, runs those again one at a time, and keeps everything "
     "the other layers make (docs/training-step.md#memory)"},
    {"recompute_num_layers", "integer >= 1, at most the layers of a model stage", "1",
     "full only (Megatron's --recompute-num-layers): uniform's group size, or how many layers "
     "of each stage block recomputes"},
    {"activation_dtype", "\"bf16\" or \"fp8\"", "\"bf16\"",
     "how saved activations that only GEMMs and SwiGLU read back are kept (the norms' outputs, "
     "MLA's latents, MLP and expert inputs, gate, up and SwiGLU outputs): fp8 is DeepSeek-V3's "
     "and FP8 training's caching; the norms' inputs, Q, K, V and the attention output stay "
     "BF16 (memory only: the casts are priced with the GEMMs' FP8 inputs)"},
    {"grad_dtype", "\"bf16\" or \"fp32\"", "\"bf16\"",
     "the gradient buffer and its reduction over DP"},
    {"optimizer_moments_dtype", "\"bf16\" or \"fp32\"", "\"fp32\"",
     "Adam's two moments (the master weight stays FP32): bf16 is DeepSeek-V3's, 8 bytes of "
     "optimizer state per parameter instead of 12, and less for Adam to read and write"},
    {"step_overhead_ms", "number in [0, 1e6]", "14.2",
     "the framework's fixed cost per step, after the optimizer and the parameter gathers on "
     "every GPU, its own phase (step_overhead); the default is Megatron-DeepSpeed's, fitted on "
     "one published log (docs/training-step.md#the-steps-fixed-cost); 0 leaves it out"},
    {"cpu_offload_layers", "integer >= 1, below the model's layers", "none",
     "Megatron's --cpu-offloading-num-layers: the first N layers' saved activations go to host "
     "memory after their forward and come back before their backward, over the GPU's host "
     "link (cluster gpu.host_GBps) beside the next layer's compute; pp 1 and no recomputation, "
     "as Megatron requires (docs/training-step.md#activation-offload)"},
    {"cross_entropy", "\"unfused\", \"fused\" or \"online\"", "\"unfused\"",
     "the loss over the vocabulary on the last stage, by the bytes per logit it moves forward "
     "and backward: unfused is Megatron-LM's default (one PyTorch op at a time in FP32: 38 and "
     "14), fused its --cross-entropy-loss-fusion, NeMo's default (22 and 14), online one "
     "kernel (Transformer Engine's, Liger-Kernel's: 6 and 4; "
     "docs/training-step.md#the-output-layer)"},
    {"stage_layers", "array of integers >= 1, one per model stage", "even split",
     "layers of each model stage in order (Megatron's --pipeline-model-parallel-layout as "
     "counts; pp x virtual_stages stages, pp under dualpipe), summing to the model's layers "
     "and its MTP blocks; the default gives the first and last stages the fewest "
     "(docs/training-step.md#stage-layers)"},
    {"fold", "boolean", "true",
     "false: every GPU of the mesh in one plan (each layer, activation transfer and gradient "
     "collective on every GPU), to check the folded step on a small cluster; `hopsim run "
     "--no-fold` sets it"},
}};

}  // namespace hopsim::config::tables
