#!/usr/bin/env python3
"""The speed curve (make bench): how a run's cost grows with the cluster, per workload.

Usage: speed_curve.py [--hopsim build/bin/hopsim] [--runs 3] [--csv FILE] [--plot FILE.png]
                      [--max-gpus N] [--only FAMILY] [--smallest]

Runs `hopsim run` on shipped experiments scaled by --set from 8 GPUs up (POINTS below: an
all-to-all and a ring all-reduce over every GPU, a DeepSeek-V3 MoE layer under EP, Llama 3
405B training steps folded from 1,024 to 65,536 GPUs (TP 8, PP 16, DP grows, 16 micro-batches
per pipeline), and a Llama 3 8B step unfolded, every GPU in the plan), each in its own
process: the median wall time of --runs runs, the peak memory of one (/usr/bin/time -v), and the events and flows its summary prints. Exit status 1 when a point fails to
run (a renamed key, a config that no longer fits), so that ctest's smoke run catches it. Prints a table (wall s, events/s, flows/s, GPUs per
wall second, peak MB); --csv writes it, --plot draws wall time, peak memory and events/s
against GPUs, log-log, one line per family (matplotlib; without it here, /usr/bin/python3 draws it).
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

A2A = "configs/experiments/a2a-16gpu-h100.json"
EP = "configs/experiments/deepseek-v3-moe-ep64.json"
L405 = "configs/experiments/llama3-405b-8k-8192gpu.json"
L8 = "configs/experiments/llama3-8b-step-32gpu.json"


def cluster(gpus):
    return [f"cluster.nodes={max(1, gpus // 8)}"]


def collective(op, algorithm, gpus):
    return (A2A, cluster(gpus) + [f"workload.op={op}", f"workload.algorithm={algorithm}",
                                  "workload.ranks=null", "workload.bytes=1073741824",
                                  "workload.channels=1" if op == "all_reduce" else
                                  "workload.combine=false"])


def ep_layer(gpus):
    nodes = max(1, gpus // 8)
    return (EP, cluster(gpus) + [f"cluster.fabric.nodes_per_leaf={min(32, nodes)}",f"parallel.ep={gpus}", f"parallel.dp={gpus}",
                                 "workload.layers=1", f"workload.max_nodes_per_token="
                                 f"{min(4, max(1, gpus // 8))}"])


def folded_step(gpus):
    dp = gpus // 128
    return (L405, ["cluster=h100-dgx-2048"] + cluster(gpus) +
            [f"parallel.dp={dp}", f"workload.global_batch={16 * dp}"])


def unfolded_step(gpus):
    dp = gpus // 8
    return (L8, ["--no-fold"] + cluster(gpus) + [f"parallel.dp={dp}",
                                                 f"workload.global_batch={8 * dp}"])


# (family, GPU counts, the experiment and --set values for a count)
POINTS = [
    ("all-to-all (flat, 1 GiB)", [8, 64, 256, 1024], lambda g: collective("all_to_all", "flat", g)),
    ("all-reduce (ring, 1 GiB)", [8, 64, 256, 1024],
     lambda g: collective("all_reduce", "ring", g)),
    ("MoE layer (DeepSeek-V3, EP)", [8, 32, 64, 128, 256], ep_layer),
    ("step, folded (Llama 3 405B)", [1024, 4096, 16384, 65536], folded_step),
    ("step, unfolded (Llama 3 8B)", [8, 32, 128, 512, 2048], unfolded_step),
]

SIMULATED = re.compile(r"^simulated\s+(\d+) events, (\d+) flows", re.M)


def command(hopsim, experiment, sets):
    cmd = [hopsim, "run", experiment]
    for s in sets:
        cmd += [s] if s.startswith("--") else ["--set", s]
    return cmd


def peak_run(cmd):
    """(exit status, stdout, stderr, peak resident MB) of one run of `cmd`: GNU time's figure,
    or nan without /usr/bin/time (make bench requires it; the ctest smoke run does not)."""
    timed = os.path.exists("/usr/bin/time")
    with tempfile.NamedTemporaryFile("r") as timing:
        prefix = ["/usr/bin/time", "-v", "-o", timing.name] if timed else []
        child = subprocess.Popen(prefix + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        out, err = child.communicate()
        if timed:
            found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing.read())
            return child.returncode, out, err, int(found.group(1)) / 1024 if found else 0
    return child.returncode, out, err, float("nan")


def measure(cmd, runs):
    """(median wall s, peak MB, events, flows) of `cmd`, or None with the reason printed."""
    rc, out, err, peak = peak_run(cmd)
    found = SIMULATED.search(out)
    if rc != 0 or not found:
        print(f"  failed ({rc}): {' '.join(cmd)}: {err.strip()[:300]}", file=sys.stderr)
        return None
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls), peak, int(found.group(1)), int(found.group(2))


def plot(rows, path):
    """Wall time and peak memory against GPUs, and events/s against GPUs, log-log, one line per family."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if sys.executable == "/usr/bin/python3" or not os.path.exists("/usr/bin/python3"):
            raise SystemExit("speed_curve.py: --plot needs matplotlib (apt-get install "
                             "python3-matplotlib, or pip install matplotlib)")
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            write_csv(rows, f)
        subprocess.run(["/usr/bin/python3", __file__, "--from-csv", f.name, "--plot", path],
                       check=True)
        os.unlink(f.name)
        return
    fig, (wall, mem, rate) = plt.subplots(1, 3, figsize=(15, 4.4))
    for family in dict.fromkeys(r["family"] for r in rows):
        mine = [r for r in rows if r["family"] == family]
        gpus = [r["gpus"] for r in mine]
        wall.plot(gpus, [r["wall_s"] for r in mine], marker="o", label=family)
        mem.plot(gpus, [r["peak_MB"] for r in mine], marker="o", label=family)
        rate.plot(gpus, [r["events_per_s"] for r in mine], marker="o", label=family)
    for ax, label in ((wall, "wall time of `hopsim run` (s)"), (mem, "peak memory (MB)"),
                      (rate, "simulated events per wall second")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("simulated GPUs")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    wall.legend(fontsize=7, loc="upper left")
    fig.suptitle("hopsim's cost as the cluster grows (make bench; one core, Release)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f"{path}: wall time, peak memory and events/s against GPUs, log-log")


FIELDS = ["family", "gpus", "wall_s", "events", "flows", "events_per_s", "flows_per_s",
          "gpus_per_wall_s", "peak_MB"]


def write_csv(rows, out):
    w = csv.DictWriter(out, fieldnames=FIELDS)
    w.writeheader()
    w.writerows(rows)


def read_csv(path):
    with open(path, encoding="utf-8") as f:
        return [{k: (v if k == "family" else float(v)) for k, v in r.items()}
                for r in csv.DictReader(f)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hopsim", default="build/bin/hopsim")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--csv")
    parser.add_argument("--plot")
    parser.add_argument("--max-gpus", type=int, default=65536)
    parser.add_argument("--only", help="the families whose names contain this")
    parser.add_argument("--smallest", action="store_true",
                        help="each family's smallest point only (ctest's smoke run)")
    parser.add_argument("--from-csv", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.from_csv:
        plot(read_csv(args.from_csv), args.plot)
        return 0
    rows, failed = [], 0
    print(f"{'family':30} {'GPUs':>6} {'wall_s':>8} {'events':>10} {'events/s':>10} "
          f"{'flows/s':>10} {'GPUs/s':>10} {'peak_MB':>8}")
    for family, counts, point in POINTS:
        if args.only and args.only not in family:
            continue
        for gpus in [g for g in counts if g <= args.max_gpus][:1 if args.smallest else None]:
            got = measure(command(args.hopsim, *point(gpus)), args.runs)
            if got is None:
                failed += 1
                continue
            wall, peak, events, flows = got
            rows.append({"family": family, "gpus": gpus, "wall_s": round(wall, 4),
                         "events": events, "flows": flows,
                         "events_per_s": round(events / wall), "flows_per_s": round(flows / wall),
                         "gpus_per_wall_s": round(gpus / wall), "peak_MB": round(peak, 1)})
            r = rows[-1]
            print(f"{family:30} {gpus:6d} {wall:8.3f} {events:10d} {r['events_per_s']:10d} "
                  f"{r['flows_per_s']:10d} {r['gpus_per_wall_s']:10d} {peak:8.1f}", flush=True)
    if args.csv:
        with open(args.csv, "w", encoding="utf-8", newline="") as f:
            write_csv(rows, f)
    if args.plot:
        plot(rows, args.plot)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
