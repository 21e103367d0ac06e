#!/usr/bin/env python3
"""Replays tests/fuzz/regressions.json: inputs that once crashed, hung, overflowed or passed
silently. Each must now exit with its code within 10 s, with one line on stderr containing the
expected text. Arguments may be "@file:TEXT" (TEXT written to a file in the source tree's
folder, paths inside relative to the source tree), "@deep:N" (N nested brackets), "@array:N"
(a collective whose ranks array has N elements) or "@cycle:N"
(a flows experiment whose N flows wait for each other in a ring).

Usage: regressions.py --hopsim BIN --source-dir DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CASE_TIMEOUT_S = 60


def expand(arg, source_dir, tmp, index):
    if arg.startswith("@file:"):
        path = os.path.join(tmp, f"input-{index}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(arg[len("@file:"):].replace('"configs/', f'"{source_dir}/configs/'))
        return path
    if arg.startswith("name=@deep:"):
        n = int(arg.split(":")[1])
        return "name=" + "[" * n + "]" * n
    if arg.startswith("@array:"):
        n = int(arg.split(":")[1])
        path = os.path.join(tmp, f"array-{index}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write('{"cluster": "%s/configs/clusters/h100-dgx.json", "workload": {"kind": '
                    '"collective", "op": "all_gather", "bytes": 1024, "ranks": [' % source_dir)
            f.write(",".join(["0"] * n))
            f.write("]}}")
        return path
    if arg.startswith("@cycle:"):
        n = int(arg.split(":")[1])
        flows = [{"id": f"f{i}", "src": 0, "dst": 1, "bytes": 8, "after": [f"f{(i + 1) % n}"]}
                 for i in range(n)]
        doc = {"cluster": f"{source_dir}/configs/clusters/h100-dgx.json",
               "workload": {"kind": "flows", "flows": flows}}
        path = os.path.join(tmp, f"cycle-{index}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path
    return arg


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hopsim", required=True)
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()
    source_dir = os.path.abspath(args.source_dir)
    with open(os.path.join(source_dir, "tests/fuzz/regressions.json"), encoding="utf-8") as f:
        cases = json.load(f)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            argv = [os.path.abspath(args.hopsim)] + [expand(a, source_dir, tmp, i)
                                                     for a in case["args"]]
            # A hang, not a slow machine: the 100,000-flow cycle takes 0.9 s in Release and
            # 7-8.5 s under ASan + UBSan on a shared 2-core machine.
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=CASE_TIMEOUT_S,
                                   cwd=source_dir, check=False)
                lines = p.stderr.split("\n")
                ok = (p.returncode == case["exit"] and len(lines) == 2 and not lines[1] and
                      case["stderr"] in lines[0] and len(lines[0]) < 2000)
                shown = f"exit {p.returncode}: {p.stderr.strip()[:200]}"
            except subprocess.TimeoutExpired:
                ok, shown = False, f"timed out after {CASE_TIMEOUT_S} s"
            print(f"{'ok  ' if ok else 'FAIL'} {case['name']}: {shown}")
            failed += 0 if ok else 1
    print(f"{len(cases) - failed} of {len(cases)} regressions pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
