#!/usr/bin/env python3
"""Writes the published H200, H800, GB200 and GB300 calibration tables from cited figures.

    python3 tools/scripts/published_calibration.py [--out configs/calibration] [--check]

configs/calibration/h200-published.json, h800-published.json, gb200-published.json and
gb300-published.json are this script's output;
rerun it after changing a figure here, never edit the JSON by hand. Each table keeps the
kernel times its source reports (cuDNN's benchmark prints milliseconds, DeepGEMM TFLOP/s,
converted with the table's FLOP formula). The H200 and H800 files name h100-published as their
`base`, the GB200 and GB300 files h200-published: what a file does not cover is answered from
its base, scaled to the cluster's GPU by the compute model's rule (compute-bound kernels by
peak FLOPs, memory-bound ones by HBM bandwidth).
"""
import argparse
import json
import pathlib

CREATED = "2026-12-03T00:00:00Z"

# NVIDIA/cudnn-frontend, benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn/, CSVs of
# 2026-02-27 (commit df73764): cuDNN 9.19 SDPA on one NVIDIA H200, batch 1, median of 10
# iterations; forward and backward milliseconds per sequence length.
CUDNN_H200_SOURCE = (
    "NVIDIA/cudnn-frontend, benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn/"
    "{csv} (commit df73764, Feb 2026): cuDNN 9.19 (backend 91901) SDPA on NVIDIA H200, batch 1, "
    "{shape}; median of 10 iterations; the CSV's fwd_time_ms / bwd_time_ms as microseconds")
LLAMA_CSV = "llama3.1_20260227_034703.csv"
LLAMA_SHAPE = "64 query heads over 8 KV heads (Llama 3.1), head dim 128"
# seq: (fwd ms, bwd ms) per (dtype, mask)
LLAMA = {
    ("bf16", "causal_top_left"): {2048: (0.142, 0.464), 4096: (0.465, 1.450),
                                  8192: (1.708, 5.083), 16384: (6.531, 19.002),
                                  32768: (25.566, 75.688)},
    ("bf16", "none"): {2048: (0.217, 0.681), 4096: (0.819, 2.453), 8192: (3.182, 9.262),
                       16384: (12.524, 35.947), 32768: (50.769, 153.841)},
    ("fp8", "causal_top_left"): {2048: (0.098, 0.437), 4096: (0.322, 1.459),
                                 8192: (1.141, 6.392), 16384: (4.357, 29.422),
                                 32768: (16.884, 118.729)},
    ("fp8", "none"): {2048: (0.158, 0.647), 4096: (0.565, 2.285), 8192: (2.149, 8.637),
                      16384: (8.335, 33.355), 32768: (33.120, 130.528)},
}
DSV3_CSV = "dsv3_20260227_034744.csv"
DSV3_SHAPE = ("128 heads (DeepSeek-V3's MLA in training, as MHA), head dims 192 (QK) and 128 "
              "(V), causal, deterministic backward; 16K and 32K ran out of memory in that "
              "harness")
DSV3 = {2048: (0.330, 1.271), 4096: (1.148, 4.424), 8192: (4.278, 16.162)}

# NVIDIA/cudnn-frontend, benchmark/sdpa_benchmark_training/results/{llama3.1,dsv3}/{gb200,gb300}/,
# CSVs of 2026-04-24 (commit fb682ce, the v1.23.0 release): cuDNN 9.22 SDPA on one NVIDIA GB200 or
# GB300 (a GPU of an NVL72 rack), batch 2, median of 10 iterations; the CSV's time_ms per pass,
# the backward's non-deterministic rows, as training runs by default (on the GB200 the
# deterministic backward is 11-20% slower for GQA in BF16, -4 to +9% for MLA in BF16, within
# 3.2% in FP8).
CUDNN_BLACKWELL_SOURCE = (
    "NVIDIA/cudnn-frontend, benchmark/sdpa_benchmark_training/results/{csv} (commit fb682ce, "
    "v1.23.0, Apr 2026): cuDNN 9.22 (backend 92200) SDPA on NVIDIA {gpu}, batch 2, {shape}; "
    "median of 10 iterations; the CSV's time_ms (the backward's non-deterministic row) as "
    "microseconds")
GB200_LLAMA_CSV = "llama3.1/gb200/llama3.1_20260424_100750.csv"
GB200_DSV3_CSV = "dsv3/gb200/dsv3_20260424_101009.csv"
DSV3_MLA_SHAPE = ("128 heads (DeepSeek-V3's MLA in training, as MHA), head dims 192 (QK) and "
                    "128 (V)")
# seq: (fwd ms, bwd ms) per (dtype, mask), at batch 2
GB200_LLAMA = {
    ("bf16", "causal_top_left"): {2048: (0.125, 0.389), 4096: (0.391, 1.198),
                                  8192: (1.397, 4.127), 16384: (5.150, 16.554),
                                  32768: (21.692, 71.756)},
    ("bf16", "none"): {2048: (0.192, 0.611), 4096: (0.687, 2.037), 8192: (2.483, 7.831),
                       16384: (10.369, 32.014), 32768: (43.056, 139.364)},
    ("fp8", "causal_top_left"): {2048: (0.097, 0.414), 4096: (0.305, 1.167),
                                 8192: (1.074, 3.781), 16384: (4.084, 13.476),
                                 32768: (16.012, 52.155)},
    ("fp8", "none"): {2048: (0.146, 0.566), 4096: (0.525, 1.743), 8192: (1.962, 6.206),
                      16384: (7.773, 23.960), 32768: (31.655, 96.384)},
}
GB200_DSV3 = {
    ("bf16", "causal_top_left"): {2048: (0.321, 1.056), 4096: (0.977, 3.383),
                                  8192: (3.470, 11.984), 16384: (13.103, 50.424),
                                  32768: (50.456, 212.546)},
    ("bf16", "none"): {2048: (0.461, 1.706), 4096: (1.650, 6.085), 8192: (6.249, 25.403),
                       16384: (24.270, 105.115), 32768: (111.031, 421.194)},
    ("fp8", "causal_top_left"): {2048: (0.207, 0.681), 4096: (0.656, 2.112),
                                 8192: (2.294, 7.296), 16384: (8.845, 29.050),
                                 32768: (35.942, 123.181)},
    ("fp8", "none"): {2048: (0.316, 0.989), 4096: (1.092, 3.450), 8192: (4.258, 13.472),
                      16384: (16.984, 57.481), 32768: (75.166, 236.705)},
}

# The same benchmark, release and harness on one NVIDIA GB300 (a Blackwell Ultra GPU of a GB300
# NVL72 rack, whose SFUs compute the softmax's exponents twice as fast as the GB200's), CSVs of
# 2026-04-24 in results/{llama3.1,dsv3}/gb300/.
GB300_LLAMA_CSV = "llama3.1/gb300/llama3.1_20260424_100757.csv"
GB300_DSV3_CSV = "dsv3/gb300/dsv3_20260424_101002.csv"
# seq: (fwd ms, bwd ms) per (dtype, mask), at batch 2
GB300_LLAMA = {
    ("bf16", "causal_top_left"): {2048: (0.100, 0.356), 4096: (0.323, 1.101),
                                  8192: (1.185, 3.832), 16384: (4.593, 14.593),
                                  32768: (18.014, 59.024)},
    ("bf16", "none"): {2048: (0.152, 0.567), 4096: (0.579, 1.924), 8192: (2.181, 7.181),
                       16384: (8.734, 28.638), 32768: (38.317, 123.272)},
    ("fp8", "causal_top_left"): {2048: (0.070, 0.364), 4096: (0.217, 0.985),
                                 8192: (0.759, 3.087), 16384: (2.880, 10.805),
                                 32768: (11.319, 41.328)},
    ("fp8", "none"): {2048: (0.101, 0.494), 4096: (0.368, 1.495), 8192: (1.392, 5.209),
                      16384: (5.529, 20.203), 32768: (23.072, 80.754)},
}
GB300_DSV3 = {
    ("bf16", "causal_top_left"): {2048: (0.268, 0.977), 4096: (0.864, 3.127),
                                  8192: (3.013, 11.074), 16384: (11.178, 43.911),
                                  32768: (44.189, 177.494)},
    ("bf16", "none"): {2048: (0.388, 1.600), 4096: (1.419, 5.641), 8192: (5.439, 21.973),
                       16384: (21.640, 91.189), 32768: (91.788, 366.969)},
    ("fp8", "causal_top_left"): {2048: (0.150, 0.591), 4096: (0.493, 1.803),
                                 8192: (1.758, 6.188), 16384: (6.653, 23.257),
                                 32768: (26.146, 95.057)},
    ("fp8", "none"): {2048: (0.225, 0.851), 4096: (0.832, 2.971), 8192: (3.233, 11.395),
                      16384: (12.794, 44.344), 32768: (52.327, 185.459)},
}

# deepseek-ai/DeepGEMM pull request #95 (description, 2025-05-06), "Weight gradient GEMMs for
# dense models": wgrad_gemm_fp8_fp8_fp32_nt on H800 SXM5, TFLOP/s. DeepGEMM's D[M x N] is the
# weight gradient (M = the layer's input features, N = its outputs) summed over K tokens, which
# is the (m, n, k) a wgrad table holds.
DEEPGEMM_WGRAD_SOURCE = (
    "deepseek-ai/DeepGEMM pull request #95 (Weight gradient kernels for dense and MoE models, "
    "2025-05-06), table 'Weight gradient GEMMs for dense models': wgrad_gemm_fp8_fp8_fp32_nt on "
    "H800 SXM5, FP8 inputs with FP32 accumulation into the main gradient; M x N is the weight "
    "(input features x outputs), K the tokens; TFLOP/s converted with gemm_v1")
DEEPGEMM_WGRAD = [  # M, N, K, TFLOP/s
    (7168, 2112, 4096, 920), (1536, 24576, 4096, 986), (512, 32768, 4096, 878),
    (16384, 7168, 4096, 994), (7168, 4096, 4096, 942), (2048, 7168, 4096, 920),
    (7168, 2112, 8192, 1052), (1536, 24576, 8192, 1092), (512, 32768, 8192, 1014),
]


def calibration(device, description, tables, base="h100-published"):
    """A published calibration file for `device` (name, peaks, HBM; Hopper's cc and SMs unless
    it says otherwise) whose gaps `base` answers."""
    return {
        "schema": "hopsim.calibration/1",
        "created_utc": CREATED,
        "source": "published",
        "device": {"cc": "9.0", "sm_count": 132, **device},
        "method": {
            "kind": "published figures, converted",
            "statistic": "as reported by each source (see each table's source)",
        },
        "description": description + " Written by tools/scripts/published_calibration.py.",
        "base": base,
        "tables": tables,
    }


def us(ms):
    return round(ms * 1000, 4)


def attention_table(pass_, dtype, d_qk, d_v, mask, gqa, bh, times, source):
    seqs = sorted(times)
    cells = []
    for s_q in seqs:
        for s_kv in seqs:
            cells.append(us(times[s_q][0 if pass_ == "fwd" else 1]) if s_q == s_kv else None)
    return {
        "op": "attn", "pass": pass_, "impl": "cudnn",
        "key": {"dtype": dtype, "d_qk": d_qk, "d_v": d_v, "mask": mask, "gqa": gqa},
        "axes": [{"name": "s_q", "values": seqs}, {"name": "s_kv", "values": seqs},
                 {"name": "bh", "values": [bh]}],
        "flops": "attn_fwd_v1" if pass_ == "fwd" else "attn_bwd_v1",
        "time_us": cells, "source": source,
    }


def cudnn_attention_tables(source, runs):
    """A forward and a backward table per (dtype, mask) of each run of the cuDNN benchmark:
    (csv, shape, d_qk, gqa, bh, {(dtype, mask): {seq: (fwd ms, bwd ms)}}), d_v 128."""
    tables = []
    for csv, shape, d_qk, gqa, bh, families in runs:
        for (dtype, mask), times in families.items():
            for pass_ in ("fwd", "bwd"):
                tables.append(attention_table(pass_, dtype, d_qk, 128, mask, gqa, bh, times,
                                              source.format(csv=csv, shape=shape)))
    return tables


def h200():
    tables = cudnn_attention_tables(CUDNN_H200_SOURCE, (
        (LLAMA_CSV, LLAMA_SHAPE, 128, 8, 64, LLAMA),
        (DSV3_CSV, DSV3_SHAPE, 192, 1, 128, {("bf16", "causal_top_left"): DSV3})))
    return calibration(
        {"name": "NVIDIA H200", "cudnn": "9.19.1", "peak_bf16_tflops": 989.4,
         "peak_fp8_tflops": 1978.9, "hbm_GBps": 4800},
        "Published H200 SXM kernel times (the H200 has the H100's SMs and clocks and 4.8 "
        "against 3.35 TB/s of HBM3e; NVIDIA datasheets). cuDNN's attention benchmark on an "
        "H200 gives the attention tables: GQA 8 at head dim 128 (Llama 3.1) and MLA's 192/128 "
        "head dims (DeepSeek-V3), at batch 1, so bh is the query heads and every cell lies "
        "on the diagonal s_q = s_kv. No GEMM or memory-bound kernel grid has been published "
        "for the H200: those come from the base, h100-published, scaled by the compute "
        "model's rule (a kernel that is compute-bound on the H100 by the ratio of peaks, "
        "989.4 / 989, any other by the ratio of HBM bandwidths, 3350 / 4800).",
        tables)


BLACKWELL_TABLES = (
    "cuDNN's attention benchmark on a {gpu} gives the attention tables: GQA 8 at head dim 128 "
    "(Llama 3.1) and MLA's 192/128 head dims (DeepSeek-V3), BF16 and FP8, causal and full, "
    "2K-32K, at batch 2, so bh is twice the query heads and every cell lies on the diagonal "
    "s_q = s_kv; its MXFP8 rows are left out (a table's key has no FP8 recipe). No GEMM or "
    "memory-bound kernel grid has been published for Blackwell at these shapes: those come "
    "from the base, h200-published (and its base h100-published), scaled by the compute "
    "model's rule (a kernel compute-bound on the base's GPU by the ratio of peaks, a GEMM also "
    "by Hopper's share of peak, 0.7, over the cluster's gpu.gemm_efficiency; any other by the "
    "ratio of HBM bandwidths).")


def blackwell(gpu, llama_csv, llama, dsv3_csv, dsv3, device, preamble):
    """A Blackwell GPU's file: cuDNN's attention measured on it, the rest from h200-published."""
    source = CUDNN_BLACKWELL_SOURCE.replace("{gpu}", gpu)
    tables = cudnn_attention_tables(source, (
        (llama_csv, LLAMA_SHAPE, 128, 8, 128, llama),
        (dsv3_csv, DSV3_MLA_SHAPE, 192, 1, 256, dsv3)))
    return calibration({"name": "NVIDIA " + gpu, "cc": device["cc"], "sm_count": 148,
                        "cudnn": "9.22.0", "peak_bf16_tflops": 2500, "peak_fp8_tflops": 5000,
                        "peak_fp4_tflops": device["fp4"], "hbm_GBps": 8000},
                       preamble + " " + BLACKWELL_TABLES.format(gpu=gpu), tables,
                       base="h200-published")


def gb200():
    return blackwell(
        "GB200", GB200_LLAMA_CSV, GB200_LLAMA, GB200_DSV3_CSV, GB200_DSV3,
        {"cc": "10.0", "fp4": 10000},
        "Published GB200 kernel times (a Blackwell GPU of a GB200 NVL72 rack: 148 SMs, 2.5 "
        "PFLOP/s dense BF16, 5 FP8, 10 NVFP4, 8 TB/s of HBM3e; NVIDIA's GB200 NVL72 datasheet "
        "per GPU).")


def gb300():
    return blackwell(
        "GB300", GB300_LLAMA_CSV, GB300_LLAMA, GB300_DSV3_CSV, GB300_DSV3,
        {"cc": "10.3", "fp4": 15000},
        "Published GB300 kernel times (a Blackwell Ultra GPU of a GB300 NVL72 rack: 148 SMs, "
        "the GB200's 2.5 PFLOP/s dense BF16, 5 FP8 and 8 TB/s of HBM3e, 15 NVFP4, and twice "
        "its SFU exponent rate, which attention's softmax runs on; NVIDIA's GB300 NVL72 "
        "datasheet per GPU).")


def h800():
    ms = sorted({m for m, _, _, _ in DEEPGEMM_WGRAD})
    ns = sorted({n for _, n, _, _ in DEEPGEMM_WGRAD})
    ks = sorted({k for _, _, k, _ in DEEPGEMM_WGRAD})
    rate = {(m, n, k): tf for m, n, k, tf in DEEPGEMM_WGRAD}
    cells = []
    for m in ms:
        for n in ns:
            for k in ks:
                tf = rate.get((m, n, k))
                cells.append(None if tf is None else round(2 * m * n * k / (tf * 1e12) * 1e6, 4))
    wgrad = {
        "op": "gemm", "pass": "bwd", "impl": "deepgemm", "key": {"dtype": "fp8", "role": "wgrad"},
        "axes": [{"name": "m", "values": ms}, {"name": "n", "values": ns},
                 {"name": "k", "values": ks}],
        "flops": "gemm_v1", "time_us": cells, "source": DEEPGEMM_WGRAD_SOURCE,
    }
    return calibration(
        {"name": "NVIDIA H800", "peak_bf16_tflops": 989.4, "peak_fp8_tflops": 1978.9,
         "hbm_GBps": 3350},
        "Published H800 SXM kernel times: DeepGEMM's FP8 weight-gradient GEMMs, measured on "
        "H800 by DeepSeek. The H800 has the H100 SXM's SMs, clocks, peaks and HBM (NVIDIA "
        "datasheets; it differs in NVLink, which the compute model does not use), so the "
        "base, h100-published, answers everything else unscaled: its GEMM, attention and "
        "DeepGEMM forward tables (those measured on H800 too).",
        [wgrad])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parents[2] /
                                             "configs" / "calibration"))
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a file differs from what this writes")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    stale = []
    for name, doc in (("h200-published.json", h200()), ("h800-published.json", h800()),
                      ("gb200-published.json", gb200()), ("gb300-published.json", gb300())):
        path = out / name
        if args.check:
            if not path.exists() or json.loads(path.read_text()) != doc:
                stale.append(str(path))
            continue
        path.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {path}: {len(doc['tables'])} tables")
    for path in stale:
        print(f"{path}: differs from what tools/scripts/published_calibration.py writes; rerun it")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
