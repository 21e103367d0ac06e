// The reference of calibration table files (schema "hopsim.calibration/1").
#include "tools/config/schema_tables.hpp"

namespace hopsim::config::tables {

const std::array<KeyDoc, 9> kCalibration{{
    {"schema", "\"hopsim.calibration/1\"", "required", "the format version"},
    {"created_utc", "string", "required", "when the table was made"},
    {"source", "\"measured\" or \"published\"", "required", "published tables cite every table"},
    {"device", "object", "required", "the GPU the times belong to"},
    {"method", "object of strings, numbers, booleans", "required",
     "how times were taken (timer, L2 flush, warm-up, statistic)"},
    {"description", "string", "none", "free text"},
    {"base", "string", "none",
     "a shipped calibration table (\"h100-published\") that answers where none of this file's "
     "own tables does, scaled from its GPU to the cluster's; the base's own base answers where "
     "neither does (at most 4 bases in a chain, none twice)"},
    {"auto", "boolean", "true",
     "whether \"calibration\": \"auto\" may choose this table (false: only experiments that name "
     "it use it, e.g. a partial measurement)"},
    {"tables", "array of objects", "required", "at least one table"},
}};

const std::array<KeyDoc, 14> kCalibrationDevice{{
    {"name", "string", "required", "device name; must contain the cluster GPU's model (\"H100\")"},
    {"cc", "string", "none", "compute capability"},
    {"sm_count", "integer in [1, 10^6]", "none", "streaming multiprocessors"},
    {"driver", "string or integer", "none", "driver version"},
    {"cuda_runtime", "string or integer", "none", "CUDA runtime version"},
    {"cublas", "string or integer", "none", "cuBLAS version"},
    {"cudnn", "string or integer", "none", "cuDNN version"},
    {"clocks_mhz", "object of numbers > 0", "none", "clocks during the measurement, MHz"},
    {"ceilings", "object", "none", "measured ceilings"},
    {"hbm_bytes", "integer in [1, 2^63)", "none", "HBM capacity, bytes"},
    {"equivalent_gpus", "array of strings", "[]", "GPU models with the same SMs and clocks"},
    {"peak_bf16_tflops", "number in (0, 10^6]", "none",
     "datasheet dense BF16 peak, 10^12 FLOP/s (with the next two: other GPUs may use the table, "
     "scaled)"},
    {"peak_fp8_tflops", "number in (0, 10^6]", "none", "datasheet dense FP8 peak, 10^12 FLOP/s"},
    {"hbm_GBps", "number in (0, 10^6]", "none", "datasheet HBM bandwidth, 10^9 bytes/s"},
}};

const std::array<KeyDoc, 3> kCalibrationCeilings{{
    {"copy_GBps", "number in (0, 1e12]", "none", "device-to-device copy, 10^9 bytes/s"},
    {"bf16_gemm_tflops", "number in (0, 1e12]", "none", "best BF16 GEMM, 10^12 FLOP/s"},
    {"fp8_gemm_tflops", "number in (0, 1e12]", "none", "best FP8 GEMM, 10^12 FLOP/s"},
}};

const std::array<KeyDoc, 10> kCalibrationTable{{
    {"op", "\"gemm\", \"grouped_gemm\", \"attn\", \"memory\"", "required",
     "the kernel family (memory: a memory-bound kernel class)"},
    {"pass", "\"fwd\" or \"bwd\"", "required", "forward or backward"},
    {"impl", "string", "required", "the kernel or library, e.g. \"cublaslt\""},
    {"key", "object", "required", "categorical parameters (per op, below)"},
    {"axes", "array of {name, values}", "required", "the op's axes in order, values ascending"},
    {"flops", "\"gemm_v1\", \"grouped_gemm_v1\", \"attn_fwd_v1\", \"attn_bwd_v1\", \"bytes_v1\"",
     "required", "the FLOP formula of op and pass (memory: bytes_v1, the bytes it moves)"},
    {"time_us", "array of numbers > 0 or null", "required", "row-major over axes, microseconds"},
    {"p10_us", "array like time_us", "none", "10th percentile"},
    {"p90_us", "array like time_us", "none", "90th percentile"},
    {"source", "string", "required in published files", "citation"},
}};

const std::array<KeyDoc, 2> kCalibrationAxis{{
    {"name", "string", "required", "gemm: m, n, k; grouped_gemm: experts, tokens_per_expert; "
                                   "attn: s_q, s_kv, bh; memory: bytes"},
    {"values", "array of integers > 0", "required", "strictly ascending"},
}};

const std::array<KeyDoc, 3> kGemmKey{{
    {"dtype", "\"bf16\" or \"fp8\"", "required", "input type"},
    {"role", "\"wgrad\" or \"dgrad\"", "none",
     "which backward GEMM a bwd table times, at that GEMM's own m, n, k"},
    {"layout", "\"NN\", \"NT\", \"TN\", \"TT\"", "none", "descriptive"},
}};

const std::array<KeyDoc, 5> kGroupedGemmKey{{
    {"dtype", "\"bf16\" or \"fp8\"", "required", "input type"},
    {"n", "integer", "required", "output width"},
    {"k", "integer", "required", "reduction width"},
    {"imbalance", "\"uniform\" or \"rampR\"", "none", "token spread (max/mean R); the model "
                                                      "reads uniform tables"},
    {"role", "\"wgrad\" or \"dgrad\"", "none", "which backward GEMM a bwd table times"},
}};

const std::array<KeyDoc, 5> kAttentionKey{{
    {"dtype", "\"bf16\" or \"fp8\"", "required", "input type"},
    {"d_qk", "integer", "required", "query/key head dimension"},
    {"d_v", "integer", "required", "value head dimension"},
    {"mask", "\"none\", \"causal_top_left\", \"causal_bottom_right\"", "required", "mask"},
    {"gqa", "integer", "required", "query heads per KV head"},
}};

const std::array<KeyDoc, 2> kMemoryKey{{
    {"dtype", "\"bf16\" or \"fp8\"", "required", "the activations' type"},
    {"kernel", "\"norm\", \"fp8_cast\", \"swiglu\", \"rotary\", \"residual\", \"router\", "
               "\"permute\", \"attention_bwd_prep\", \"cross_entropy\"",
     "required", "the memory-bound kernel class (docs/compute-model.md)"},
}};

const std::array<KeyDoc, 3> kKernelRules{{
    {"schema", "\"hopsim.kernel_rules/1\"", "required", "the format's name and version"},
    {"description", "string", "none", "what the rules cover and where their names come from"},
    {"rules", "array of objects", "required", "tried in order on each kernel's name"},
}};

const std::array<KeyDoc, 3> kKernelRule{{
    {"class", "string, or array of strings", "required",
     "a kernel class (gemm_fprop, ..., other; docs/compute-model.md), \"nccl\", \"deepep\" "
     "or \"unmodelled\"; several when the name cannot tell them apart (merged into one row)"},
    {"match", "string", "required", "an ECMAScript regular expression searched in the name"},
    {"note", "string", "none", "why, and where such names were seen"},
}};

}  // namespace hopsim::config::tables
