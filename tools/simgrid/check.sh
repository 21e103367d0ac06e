#!/usr/bin/env bash
# ctest simgrid.cross-check: hopsim's finish times against SimGrid's max-min solver on a
# small mixed flow list (an uneven all-to-all-v among 32 GPUs beside chained ring steps with
# staggered starts; bench/flow_list.py --uneven --mixed), every flow within 1e-6 of its finish.
# Usage: check.sh HOPSIM SIMGRID_REPLAY
set -euo pipefail
hopsim=$1
replay=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/../../bench/flow_list.py" "$tmp" --gpus 32 --uneven --mixed >/dev/null
"$hopsim" run "$tmp/flows-csv.json" --json --no-wall-time >"$tmp/report.json"
"$replay" "$tmp/report.json" --max-error 1e-6 --log=root.thresh:warning
