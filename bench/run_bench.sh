#!/usr/bin/env bash
# make bench: each case in its own process (its peak memory is its own). Per case: one run
# under /usr/bin/time -v (peak RSS, and the bench's own line: flows, events, solves, classes
# solved, wall, events/s, makespan, mode), then the hyperfine median wall of BENCH_RUNS runs
# (1 run for a case whose first run took over BENCH_LONG_S seconds). Case h (1,024-GPU uneven
# all-to-all-v) runs in approximate mode, tolerance H_TOLERANCE (its makespan within 0.03% of
# the exact run, which takes 20-26 minutes: README, Speed).
# Then whole experiments through `hopsim run` (BENCH_EXPERIMENTS, medians of EXPERIMENT_RUNS):
# a MoE layer, and training steps folded from 2,048 and 16,384 GPUs.
# Then SimGrid on the same flows (below), where SimGrid is installed.
# Then the speed curve (bench/speed_curve.py): wall time, events/s, flows/s, GPUs per wall
# second and peak memory of collectives, EP layers and folded and unfolded steps from 8 to
# 65,536 GPUs, written to docs/images/speed-curve.csv and drawn, log-log, into
# docs/images/speed-curve.png (the README's Speed section shows both; CURVE=0 skips it).
#   BENCH_CASES="f g" make bench     # a subset
#   BENCH_CASES= BENCH_EXPERIMENTS=configs/experiments/deepseek-v3-step.json make bench
#   BENCH_CASES= BENCH_EXPERIMENTS= make bench   # only the speed curve
set -euo pipefail

bin=${BENCH_BIN:-build/bin/hopsim_bench}
cases=${BENCH_CASES-"a b c d e f g h i"}
experiments=${BENCH_EXPERIMENTS-"configs/experiments/default.json
  configs/experiments/deepseek-v3-moe-ep64.json configs/experiments/llama3-405b-8k-8192gpu.json
  configs/experiments/llama3-405b-8k-16384gpu.json configs/experiments/deepseek-v3-step.json"}
experiment_runs=${EXPERIMENT_RUNS:-3}
hopsim=${HOPSIM_BIN:-build/bin/hopsim}
runs=${BENCH_RUNS:-5}
long_s=${BENCH_LONG_S:-20}
h_tolerance=${H_TOLERANCE:-0.006}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-4s %12s %5s %10s %14s  %s\n' case median_s runs peak_MB events/s "bench line (one run)"
for c in $cases; do
  args=("$c")
  if [[ $c == h ]]; then
    args+=(--tolerance "$h_tolerance")
  fi
  /usr/bin/time -v "$bin" "${args[@]}" >"$tmp/line" 2>"$tmp/time"
  peak_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
  first_s=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0;
                 for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$tmp/time")
  n=$runs
  if awk -v s="$first_s" -v l="$long_s" 'BEGIN {exit !(s > l)}'; then
    n=1
  fi
  if [[ $n -gt 1 ]]; then
    hyperfine -N --style none --runs "$n" --export-csv "$tmp/csv" \
      "$bin ${args[*]}" >/dev/null 2>&1
    median=$(awk -F, 'NR == 2 {print $4}' "$tmp/csv")
  else
    median=$first_s
  fi
  events=$(grep -o '[0-9]* events' "$tmp/line" | head -1 | awk '{print $1}')
  printf '%-4s %12.3f %5d %10.1f %14.0f  %s\n' "$c" "$median" "$n" \
    "$(awk -v k="$peak_kb" 'BEGIN {print k / 1024}')" \
    "$(awk -v e="$events" -v m="$median" 'BEGIN {print e / m}')" "$(head -1 "$tmp/line")"
done

printf '\n%-48s %10s %5s %10s\n' experiment median_s runs peak_MB
for e in $experiments; do
  /usr/bin/time -v "$hopsim" run "$e" >/dev/null 2>"$tmp/time"
  peak_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
  hyperfine -N --style none --runs "$experiment_runs" --export-csv "$tmp/csv" \
    "$hopsim run $e" >/dev/null 2>&1
  median=$(awk -F, 'NR == 2 {print $4}' "$tmp/csv")
  printf '%-48s %10.3f %5d %10.1f\n' "$(basename "$e")" "$median" "$experiment_runs" \
    "$(awk -v k="$peak_kb" 'BEGIN {print k / 1024}')"
done

# SimGrid on the same flows, where simgrid_replay (tools/simgrid) is built (SimGrid installed):
# per case of SIMGRID_CASES (GPUs of bench/flow_list.py's uneven all-to-all-v; with "m", its
# mixed list of chained ring steps beside it), hopsim run's median wall (EXPERIMENT_RUNS; the
# whole process, hopsim_s) and its own (sim.wall_s, own_s: what simgrid_replay's wall covers,
# the platform and the simulation but not reading the input) against SimGrid's own wall on the
# report's flows (median of as many runs, one past BENCH_LONG_S), the ratio of each, and
# SimGrid's finish times against hopsim's (docs/network-model.md#against-simgrid).
simgrid=${SIMGRID_BIN:-build/bin/simgrid_replay}
simgrid_cases=${SIMGRID_CASES-"64 64m 128"}
if [[ -x $simgrid && -n $simgrid_cases ]]; then
  printf '\n%-5s %8s %10s %10s %11s %8s %8s  %s\n' case flows hopsim_s own_s simgrid_s ratio \
    own_ratio "SimGrid's line (one run)"
  for c in $simgrid_cases; do
    list=(--gpus "${c%m}" --uneven)
    if [[ $c == *m ]]; then
      list+=(--mixed)
    fi
    rm -rf "$tmp/sg"
    python3 bench/flow_list.py "$tmp/sg" "${list[@]}" >/dev/null
    # h100-dgx-2048 cut to the list's nodes (8 GPUs each): no more links than the flows use.
    nodes=(--set "cluster.nodes=$(((${c%m} + 7) / 8))")
    "$hopsim" run "$tmp/sg/flows-csv.json" "${nodes[@]}" --json --no-wall-time \
      >"$tmp/sg/report.json" 2>/dev/null
    hyperfine -N --style none --runs "$experiment_runs" --export-csv "$tmp/csv" \
      "$hopsim run $tmp/sg/flows-csv.json ${nodes[*]} --no-wall-time" >/dev/null 2>&1
    ours=$(awk -F, 'NR == 2 {print $4}' "$tmp/csv")
    # hopsim's own wall (sim.wall_s: the cluster, the plan and the simulation, not reading the
    # experiment or its CSV), the same scope as the wall simgrid_replay prints.
    : >"$tmp/own"
    for ((i = 0; i < experiment_runs; ++i)); do
      "$hopsim" run "$tmp/sg/flows-csv.json" "${nodes[@]}" --json 2>/dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["sim"]["wall_s"])' >>"$tmp/own"
    done
    own=$(sort -g "$tmp/own" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    : >"$tmp/walls"
    for ((i = 0; i < experiment_runs; ++i)); do
      "$simgrid" "$tmp/sg/report.json" --log=root.thresh:warning >"$tmp/line"
      grep -o 'wall [0-9.]*' "$tmp/line" | awk '{print $2}' >>"$tmp/walls"
      if awk -v s="$(tail -1 "$tmp/walls")" -v l="$long_s" 'BEGIN {exit !(s > l)}'; then
        break
      fi
    done
    theirs=$(sort -g "$tmp/walls" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    flows=$(grep -o '^simgrid [0-9]*' "$tmp/line" | awk '{print $2}')
    printf '%-5s %8d %10.3f %10.3f %11.3f %8.0f %8.0f  %s\n' "$c" "$flows" "$ours" "$own" \
      "$theirs" "$(awk -v a="$theirs" -v b="$ours" 'BEGIN {print a / b}')" \
      "$(awk -v a="$theirs" -v b="$own" 'BEGIN {print a / b}')" "$(cut -d' ' -f4- "$tmp/line")"
  done
fi

if [[ ${CURVE:-1} != 0 ]]; then
  printf '\nspeed curve (medians of %s runs; bench/speed_curve.py)\n' "$experiment_runs"
  python3 bench/speed_curve.py --hopsim "$hopsim" --runs "$experiment_runs" \
    --csv docs/images/speed-curve.csv --plot docs/images/speed-curve.png
fi
