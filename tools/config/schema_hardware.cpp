// The reference of cluster, model and calibration files.
#include "tools/config/schema_tables.hpp"

namespace hopsim::config::tables {

const std::array<KeyDoc, 13> kCluster{{
    {"name", "string", "required", "names the cluster in reports"},
    {"description", "string", "none", "free text"},
    {"nodes", "integer in [1, 1e6]", "required", "nodes; nodes x gpus_per_node <= 2^24"},
    {"gpus_per_node", "integer in [1, 1024]", "8", "GPUs behind each node's NVSwitch, one NIC each"},
    {"gpu", "object", "required", "the GPU model's datasheet figures"},
    {"nvlink", "object", "required", "GPU <-> NVSwitch link, per GPU and direction"},
    {"nic", "object", "required", "NIC <-> leaf link, per GPU and direction"},
    {"fabric", "object", "required", "the InfiniBand fabric"},
    {"software_overhead_us", "number in [0, 1e6]", "1.9", "paid once by every flow, microseconds"},
    {"bandwidth", "\"achievable\" or \"peak\"", "\"achievable\"", "which figure links carry"},
    {"nccl", "object", "NCCL 2.19+'s constants, no NVLS", "NCCL's cost model for collectives"},
    {"deepep", "object", "the links' full rate", "what DeepEP's kernels reach on this cluster"},
    {"sources", "object", "none", "JSON pointer -> citation, for every number of the file"},
}};

const std::array<KeyDoc, 13> kGpu{{
    {"name", "string", "required", "e.g. \"H100 SXM\"; calibration tables must name its model"},
    {"peak_bf16_tflops", "number in (0, 1e12]", "required", "dense BF16 peak, 10^12 FLOP/s"},
    {"peak_fp8_tflops", "number in (0, 1e12]", "required", "dense FP8 peak, 10^12 FLOP/s"},
    {"hbm_GB", "number in (0, 1e12]", "required",
     "HBM a process can allocate, 10^9 bytes: the CUDA runtime's total (85.03 for an "
     "\"80 GB\" H100, whose nvidia-smi shows 81,559 MiB), not the marketed size"},
    {"hbm_GBps", "number in [1, 1e12]", "required", "HBM bandwidth, 10^9 bytes/s"},
    {"sms", "integer in [1, 100000]", "required", "streaming multiprocessors"},
    {"gemm_efficiency", "number in [0.01, 1]", "0.7",
     "roofline fallback: achieved over peak for GEMMs where no calibration table answers"},
    {"attention_efficiency", "number in [0.01, 1]", "0.6",
     "roofline fallback: achieved over peak for attention kernels"},
    {"fp8_wgrad_ratio", "number in [0.01, 1]", "0.68",
     "an FP8 weight-gradient GEMM's throughput over the forward GEMM's of the same FLOPs"},
    {"memory_efficiency", "number in [0.01, 1]", "0.8",
     "achieved over HBM bandwidth for memory-bound kernels (norms, casts, SwiGLU, permutes)"},
    {"context_GB", "number in [0, hbm_GB]", "0.4",
     "memory the CUDA context holds in a training process (lazy module loading), 10^9 bytes"},
    {"host_GBps", "number in [0.1, 10000]", "55.6",
     "what copies between GPU and host memory reach per direction, 10^9 bytes/s (activation "
     "offload)"},
    {"communicator_GB", "number in [0, hbm_GB]", "0.69",
     "memory each NCCL communicator a training process uses holds (its channels' buffers), "
     "10^9 bytes"},
}};

const std::array<KeyDoc, 3> kLink{{
    {"peak_GBps", "number in (0, 1e12]", "required", "datasheet line rate, 10^9 bytes/s per direction"},
    {"achievable_GBps", "number in (0, peak_GBps]", "peak_GBps", "what transfers reach"},
    {"latency_us", "number in [0, 1e6]", "required", "per hop, microseconds"},
}};

const std::array<KeyDoc, 6> kFabric{{
    {"kind", "\"rail_optimized\" or \"fat_tree\"", "required",
     "NIC k of each node on rail leaf k, or all of a node's NICs on one leaf"},
    {"nodes_per_leaf", "integer in [0, 1e6]", "0 (one group)", "nodes per leaf group; must divide nodes"},
    {"spines", "integer in [1, 65536]", "1", "1: one trunk (ideal adaptive routing); more: ECMP"},
    {"oversubscription", "number in [1, 1e12]", "1", "leaf down-link over up-link capacity"},
    {"spine_latency_us", "number in [0, 1e6]", "0.45", "leaf <-> spine hop, microseconds"},
    {"cross_rail", "\"nvlink\" or \"spine\"", "\"nvlink\"",
     "cross-rail traffic goes over NVLink first (PXN) or through the spine"},
}};

const std::array<KeyDoc, 5> kNccl{{
    {"protocol", "\"simple\", \"ll\" or \"ll128\"", "\"simple\"",
     "the protocol collectives use unless they name one"},
    {"ring", "object", "NCCL 2.19+'s", "ring latencies by protocol"},
    {"tree", "object", "NCCL 2.19+'s", "tree latencies by protocol"},
    {"nvls", "object", "none (no NVLS)", "the NVSwitch reduces (NVLS all-reduce); its constants"},
    {"p2p_net_efficiency", "number in [0.01, 1]", "1",
     "the share of the NIC's rate send/recv between nodes reaches: context parallelism's ring "
     "and pipeline transfers (calibrated where published; docs/context-parallelism.md)"},
}};

const std::array<KeyDoc, 3> kNcclAlgorithm{{
    {"simple", "object", "required", "latencies of the Simple protocol"},
    {"ll", "object", "required", "latencies of LL (payload half of the wire bytes)"},
    {"ll128", "object", "required", "latencies of LL128 (payload 120/128 of the wire bytes)"},
}};

const std::array<KeyDoc, 3> kNcclLatency{{
    {"base_latency_us", "number in [0, 1e6]", "required", "once per collective, microseconds"},
    {"nvlink_hop_latency_us", "number in [0, 1e6]", "required", "per step inside a node"},
    {"net_hop_latency_us", "number in [0, 1e6]", "required", "per step across the network"},
}};

const std::array<KeyDoc, 3> kNvls{{
    {"nvlink_latency_us", "number in [0, 1e6]", "required", "NVLS latency inside a node"},
    {"net_latency_us", "number in [0, 1e6]", "required", "added when the ranks span nodes"},
    {"efficiency", "number in [0.01, 1]", "required",
     "NVLink bandwidth NVLS reaches, as a fraction of the links' (calibrated; see docs)"},
}};

const std::array<KeyDoc, 5> kDeepEp{{
    {"nvlink_efficiency", "number in [0.01, 1]", "required",
     "the share of NVLink bandwidth DeepEP's normal kernels forward and gather at with `sms` "
     "SMs (calibrated)"},
    {"sms", "integer in [1, 100000]", "24",
     "the SMs DeepEP's kernels held where nvlink_efficiency was fitted (its default)"},
    {"sm_exponent", "number in [0, 2]", "0.85",
     "a MoE layer's comm_sms scale the forwarding rate by (comm_sms / sms)^sm_exponent, at most "
     "the links' rate (fitted on DeepEP's FP8 dispatch at 16 to 32 SMs, docs)"},
    {"ll_dispatch_us", "number in [0, 1e6]", "0",
     "the low-latency dispatch kernel's own time per call beyond its messages' (calibrated on "
     "DeepEP's EP8 dispatch, docs)"},
    {"ll_combine_us", "number in [0, 1e6]", "0",
     "the low-latency combine kernel's own time per call beyond its messages' (calibrated on "
     "DeepEP's EP8 combine, docs)"},
}};

const std::array<KeyDoc, 14> kModel{{
    {"name", "string", "required", "names the model in reports"},
    {"description", "string", "none", "free text"},
    {"layers", "integer in [1, 100000]", "required", "transformer layers"},
    {"hidden", "integer in [1, 2^20]", "required", "model width"},
    {"ffn_hidden", "integer in [1, 2^20]", "required", "SwiGLU MLP width of dense layers"},
    {"heads", "integer in [1, 2^14]", "required", "query heads"},
    {"kv_heads", "integer in [1, 2^14]", "heads", "key/value heads (GQA); must divide heads"},
    {"head_dim", "integer in [1, 2^14]", "hidden / heads", "per-head dimension"},
    {"vocab", "integer in [1, 2^24]", "required", "vocabulary size"},
    {"tied_embeddings", "boolean", "false", "input and output embeddings shared"},
    {"mla", "object", "none", "multi-head latent attention (DeepSeek-V2/V3)"},
    {"moe", "object", "none (dense)", "mixture of experts"},
    {"mtp_depth", "integer in [0, 64]", "0",
     "multi-token-prediction modules a training step runs after the last layer"},
    {"sources", "object", "none", "JSON pointer -> citation"},
}};

const std::array<KeyDoc, 5> kMla{{
    {"q_lora_rank", "integer in [0, 2^20]", "0", "query compression rank; 0: queries projected directly"},
    {"kv_lora_rank", "integer in [1, 2^20]", "required", "key/value compression rank"},
    {"qk_nope_head_dim", "integer in [1, 2^14]", "required", "per-head query/key dimension without RoPE"},
    {"qk_rope_head_dim", "integer in [1, 2^14]", "required", "per-head decoupled RoPE dimension"},
    {"v_head_dim", "integer in [1, 2^14]", "required", "per-head value dimension"},
}};

const std::array<KeyDoc, 6> kModelMoe{{
    {"routed_experts", "integer in [1, 2^16]", "required", "routed experts per MoE layer"},
    {"shared_experts", "integer in [0, 2^10]", "0", "shared experts per MoE layer"},
    {"top_k", "integer in [1, routed_experts]", "required", "routed experts per token"},
    {"expert_ffn_hidden", "integer in [1, 2^20]", "required", "each expert's SwiGLU width"},
    {"max_nodes_per_token", "integer in [0, 2^16]", "0 (no limit)", "node-limited routing"},
    {"first_dense_layers", "integer in [0, layers]", "0", "dense layers before the first MoE"},
}};

}  // namespace hopsim::config::tables
