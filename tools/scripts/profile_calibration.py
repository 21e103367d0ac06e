#!/usr/bin/env python3
"""Writes configs/calibration/h800-deepseek-profile.json: the FP8 GEMMs and the attention of
DeepSeek-V3's own training run, timed from DeepSeek's published profile of one DualPipe pair.

    python3 tools/scripts/profile_calibration.py TRAIN_JSON [--out FILE] [--check]

TRAIN_JSON is train.json of github.com/deepseek-ai/profile-data (not shipped: the repository
has no licence; the table holds only kernel times measured from it). The trace annotates each
phase of each layer on the host (attn(F), attn(B), attn(W), mlp(F), mlp(B), mlp(W), for 4 layers
each); a GEMM kernel belongs to the phase whose annotation encloses its launch. Inside a phase
the kernels run in a fixed order, which with their FLOPs names each one (docs/validation.md,
"DeepSeek's own FP8 GEMMs", gives the order and the rates):

- attn(F): the query's and the key-value's down-projections, their up-projections, the output
  projection (and the router, in BF16, left out);
- attn(B): the output projection's data gradient, the two up-projections again (DeepSeek's
  recomputation), then the data gradients of the query's up-, the key-value's up-, the
  key-value's down- and the query's down-projection;
- attn(W): the weight gradients of the output, key-value up, query up, key-value down and
  query down projections;
- mlp(F) / mlp(B): the shared expert's gate+up, the routed experts' grouped gate+up and down,
  the shared expert's down (forward; the backward in reverse);
- mlp(W): the shared expert's down, the 4 routed experts' down (one kernel each), their
  gate+up, the shared expert's gate+up.

MLA's attention is one FlashAttention-3 call per layer and pass (`flash::compute_attn_ws`
forward, `FlashAttnBwd` backward; the backward's pre- and post-pass are memory-bound kernels that
hopsim prices apart and leaves out of this table), at DeepSeek-V3's shape: 4,096 queries and
keys, 128 heads, head dims 192 (query, key) and 128 (value), causal.

Each cell is the mean over the trace's 4 layers of a whole GPU's time: while a DeepEP kernel ran
(the trace's `dpsk::ep::` kernels, on their own stream) a compute kernel had the 112 SMs DeepEP
left it, so each kernel's time is its duration less 20/132 of the time it ran beside DeepEP,
the rule hopsim applies back under comm_sms 20 (workloads/plan/sm_sharing.hpp). The GEMMs ran
86.5% of their time beside DeepEP, attention 99.8%. The routed experts' cells assume the balanced
rows the validation experiment routes (4 experts x 8,192 rows on rank 0 of EP 64); the trace's
own rows are not recorded, and vary by layer. A shape between the table's cells takes the rate
interpolated from them (docs/compute-model.md#lookup); outside them the table's base,
h800-published (DeepGEMM's published rates, faster), answers.
"""
import argparse
import json
import pathlib
import statistics
import sys

CREATED = "2026-12-05T00:00:00Z"
TOKENS = 4096  # the profile's tokens per GPU and micro-batch
LAYERS = 4  # MoE layers per chunk: each phase annotated, each attention call made, once per layer
EXPERTS, ROWS = 4, 8192  # routed experts per GPU, rows per expert when balanced
# While a DeepEP kernel ran, the trace's compute kernels had 112 of the 132 SMs (DeepEP held 20).
# A table prices a whole GPU, and a run with comm_sms 20 runs a kernel at 112/132 of its speed
# while an exchange runs beside it, so each time is converted by the same rule, the other way.
HELD, SMS = 20, 132

# name: (n, k) of the forward GEMM, y[TOKENS x n] = x[TOKENS x k] W
DENSE = {"q_down": (1536, 7168), "kv_down": (576, 7168), "q_up": (24576, 1536),
         "kv_up": (32768, 512), "out": (7168, 16384), "shared_gate_up": (4096, 7168),
         "shared_down": (7168, 2048)}
GROUPED = {"experts_gate_up": (4096, 7168), "experts_down": (7168, 2048)}
# The FP8 GEMM kernels of each phase, in launch order: (name, role). The router's BF16 GEMMs are
# not FP8 GEMM kernels (is_gemm) and so not listed; "recompute" names a kernel read but not
# written (the up-projections again, at their forward's shape).
ORDER = {
    "attn(F)": [("q_down", "fprop"), ("kv_down", "fprop"), ("q_up", "fprop"),
                ("kv_up", "fprop"), ("out", "fprop")],
    "attn(B)": [("out", "dgrad"), ("q_up", "recompute"), ("kv_up", "recompute"),
                ("q_up", "dgrad"), ("kv_up", "dgrad"), ("kv_down", "dgrad"),
                ("q_down", "dgrad")],
    "attn(W)": [("out", "wgrad"), ("kv_up", "wgrad"), ("q_up", "wgrad"), ("kv_down", "wgrad"),
                ("q_down", "wgrad")],
    "mlp(F)": [("shared_gate_up", "fprop"), ("experts_gate_up", "fprop"),
               ("experts_down", "fprop"), ("shared_down", "fprop")],
    "mlp(B)": [("shared_down", "dgrad"), ("experts_down", "dgrad"),
               ("experts_gate_up", "dgrad"), ("shared_gate_up", "dgrad")],
    "mlp(W)": [("shared_down", "wgrad")] + [("experts_down", "wgrad")] * EXPERTS
              + [("experts_gate_up", "wgrad")] * EXPERTS + [("shared_gate_up", "wgrad")],
}
# MLA's attention call: (s_q, s_kv, batch x heads), head dims, mask.
ATTENTION = {"s": TOKENS, "bh": 128, "d_qk": 192, "d_v": 128, "mask": "causal_top_left"}
SOURCE = ("deepseek-ai/profile-data train.json (prof_ep64_tp1_varsm_hidden7168_seqlen4096: one "
          "DualPipe pair of 4-layer chunks of DeepSeek-V3 training on H800, EP 64, rank 0, 20 of "
          "132 SMs held by DeepEP): DeepSeek's own kernels, each cell the mean over the trace's 4 "
          "layers of a whole GPU's time, each kernel's duration less 20/132 of the time it ran "
          "beside DeepEP's (tools/scripts/profile_calibration.py)")


def is_gemm(name):
    return "grouped_gemm::cuda::fp8" in name or "m_grouped_fp8" in name


def attention_kind(name):
    """'fwd', 'bwd' or None: FlashAttention-3's main kernels (not the backward's pre/post-pass)."""
    if "flash::compute_attn_ws" in name:
        return "fwd"
    if "flash::FlashAttnBwd<" in name:
        return "bwd"
    return None


def deepep_spans(trace):
    """The merged [start, end) of DeepEP's kernels (`dpsk::ep::`), in order."""
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in trace["traceEvents"]
                   if e.get("cat") == "kernel" and "dpsk::ep::" in e["name"])
    merged = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def whole_gpu(e, spans):
    """Kernel e's time on a whole GPU: its duration less HELD/SMS of its time beside DeepEP."""
    start, end = e["ts"], e["ts"] + e["dur"]
    beside = sum(max(0, min(end, b) - max(start, a)) for a, b in spans)
    return e["dur"] - beside * HELD / SMS


def attention_times(trace):
    """{'fwd' | 'bwd': mean us per layer}, a whole GPU's (whole_gpu)."""
    spans = deepep_spans(trace)
    found = {"fwd": [], "bwd": []}
    for e in trace["traceEvents"]:
        kind = attention_kind(e["name"]) if e.get("cat") == "kernel" else None
        if kind:
            found[kind].append(whole_gpu(e, spans))
    for kind, v in found.items():
        if len(v) != LAYERS:
            sys.exit(f"attention {kind}: {len(v)} calls, expected one per layer ({LAYERS})")
    return {kind: statistics.mean(v) for kind, v in found.items()}


def phase_kernels(trace):
    """{phase: [[kernel us, ...] per layer]} of the FP8 GEMM kernels (a whole GPU's), in launch
    order."""
    events = trace["traceEvents"]
    spans = deepep_spans(trace)
    launches = {e["args"]["correlation"]: e["ts"] for e in events
                if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    phases = sorted((e for e in events if e.get("cat") == "user_annotation"
                     and e["name"] in ORDER), key=lambda e: e["ts"])
    gemms = sorted((e for e in events if e.get("cat") == "kernel" and is_gemm(e["name"])),
                   key=lambda e: e["ts"])
    out = {p: [] for p in ORDER}
    for a in phases:
        end = a["ts"] + a["dur"]
        inside = [e for e in gemms
                  if a["ts"] <= launches.get(e["args"].get("correlation"), -1) <= end]
        out[a["name"]].append([whole_gpu(e, spans) for e in inside])
    return out


def times(trace):
    """{(name, role): mean us per layer} (routed experts: all 4 experts' kernels summed)."""
    found = {}
    for phase, layers in phase_kernels(trace).items():
        if len(layers) != LAYERS:
            sys.exit(f"{phase}: {len(layers)} annotated layers, expected {LAYERS}")
        for layer in layers:
            if len(layer) != len(ORDER[phase]):
                sys.exit(f"{phase}: {len(layer)} FP8 GEMM kernels, expected {len(ORDER[phase])}")
            per = {}
            for (name, role), us in zip(ORDER[phase], layer):
                per[(name, role)] = per.get((name, role), 0.0) + us
            for key, us in per.items():
                found.setdefault(key, []).append(us)
    return {key: statistics.mean(v) for key, v in found.items()}


def grid_table(op, pass_, key, axes, cells, flops, note, impl="dpsk_fp8_ptp128c"):
    """A table over the axes' values, null but at the cells {point tuple: us}."""
    values = [sorted({p[i] for p in cells}) for i in range(len(axes))]
    points = [()]
    for vals in values:
        points = [p + (v,) for p in points for v in vals]
    return {"op": op, "pass": pass_, "impl": impl, "key": key,
            "axes": [{"name": a, "values": v} for a, v in zip(axes, values)], "flops": flops,
            "time_us": [round(cells[p], 1) if p in cells else None for p in points],
            "source": SOURCE + note}


def attention_tables(a):
    key = {"dtype": "bf16", "d_qk": ATTENTION["d_qk"], "d_v": ATTENTION["d_v"],
           "mask": ATTENTION["mask"], "gqa": 1}
    point = (ATTENTION["s"], ATTENTION["s"], ATTENTION["bh"])
    return [grid_table("attn", pass_, key, ["s_q", "s_kv", "bh"], {point: a[pass_]},
                       f"attn_{pass_}_v1", f"; MLA's attention, FlashAttention-3 ({pass_}"
                       ", the main kernel), one call per layer", impl="fa3")
            for pass_ in ("fwd", "bwd")]


def tables(t):
    fwd, dgrad, wgrad = {}, {}, {}
    for name, (n, k) in DENSE.items():
        fwd[(TOKENS, n, k)] = t[(name, "fprop")]
        dgrad[(TOKENS, k, n)] = t[(name, "dgrad")]  # asked at (m, k, n)
        wgrad[(k, n, TOKENS)] = t[(name, "wgrad")]  # asked at (k, n, m)
    out = [grid_table("gemm", "fwd", {"dtype": "fp8"}, ["m", "n", "k"], fwd, "gemm_v1",
                      "; FP8 GEMMs (dpsk::grouped_gemm::cuda::fp8_ptp128c), named by phase "
                      "annotation and launch order: forward GEMMs of MLA's projections and the "
                      "shared expert"),
           grid_table("gemm", "bwd", {"dtype": "fp8", "role": "dgrad"}, ["m", "n", "k"], dgrad,
                      "gemm_v1",
                      "; FP8 GEMMs, data gradients, at (m, k, n) of the forward's shape"),
           grid_table("gemm", "bwd", {"dtype": "fp8", "role": "wgrad"}, ["m", "n", "k"], wgrad,
                      "gemm_v1", "; FP8 GEMMs (fp8_dptp128c_acc), weight gradients (FP32 "
                      "accumulated), at (k, n, m)")]
    for name, (n, k) in GROUPED.items():
        for pass_, role in (("fwd", "fprop"), ("bwd", "dgrad"), ("bwd", "wgrad")):
            key = {"dtype": "fp8", "n": n, "k": k}
            if role != "fprop":
                key["role"] = role
            out.append(grid_table("grouped_gemm", pass_, key, ["experts", "tokens_per_expert"],
                                  {(EXPERTS, ROWS): t[(name, role)]}, "grouped_gemm_v1",
                                  f"; routed experts (m_grouped_fp8_ptp128c), {role}, the 4 "
                                  "experts' kernels of a layer"
                                  " (weight gradients: one kernel per expert, summed), rows "
                                  "taken as balanced"))
    return out


def document(t, a):
    return {
        "schema": "hopsim.calibration/1", "created_utc": CREATED, "source": "published",
        "description": (
            "DeepSeek-V3's own FP8 GEMMs and attention of its training run on H800, timed from "
            "DeepSeek's published profile of one DualPipe pair (deepseek-ai/profile-data, "
            "train.json) by tools/scripts/profile_calibration.py: MLA's projections and the "
            "shared expert (forward, data and weight gradients, at their own shapes over 4,096 "
            "tokens), the routed experts' grouped GEMMs (4 experts x 8,192 rows) and MLA's "
            "FlashAttention-3 calls (forward and backward, 4,096 tokens, 128 heads, head dims "
            "192/128, causal). DeepSeek's kernels "
            "ran beside DeepEP's, which held 20 of the 132 SMs while they ran: each time is the "
            "kernel's duration less 20/132 of the time it ran beside a DeepEP kernel, a whole "
            "GPU's by the rule a run with comm_sms 20 applies back. "
            "The GEMMs are slower than DeepGEMM's published rates (h800-published), which "
            "answers every shape outside these cells and every other kernel; the attention "
            "calls faster than the roofline's FlashAttention-3 curve at MLA's head dims. "
            "`auto` never chooses this "
            "table: it describes one training run's kernels; name it (\"calibration\": "
            "\"h800-deepseek-profile\") to price DeepSeek-V3 as it was trained; "
            "docs/validation.md says what it fits and "
            "what it leaves to validate."),
        "base": "h800-published", "auto": False,
        "device": {"name": "NVIDIA H800", "cc": "9.0", "sm_count": 132,
                   "peak_bf16_tflops": 989.4, "peak_fp8_tflops": 1978.9, "hbm_GBps": 3350},
        "method": {"kind": "published profile, converted",
                   "statistic": "mean over the trace's 4 layers of each kernel's duration, "
                                "less 20/132 of the time it ran beside a DeepEP kernel (the "
                                "SMs DeepEP held)"},
        "tables": tables(t) + attention_tables(a)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--out", default="configs/calibration/h800-deepseek-profile.json")
    ap.add_argument("--check", action="store_true", help="compare with --out instead")
    args = ap.parse_args()
    trace = json.load(open(args.trace))
    doc = document(times(trace), attention_times(trace))
    text = json.dumps(doc, indent=2) + "\n"
    path = pathlib.Path(args.out)
    if args.check:
        same = path.exists() and path.read_text() == text
        print(f"{path}: {'up to date' if same else 'differs from the trace'}")
        return 0 if same else 1
    path.write_text(text)
    print(f"wrote {path}: {len(doc['tables'])} tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
