#!/usr/bin/env python3
"""Golden reports: a few end-to-end runs whose results must not change unnoticed.

Each golden is the JSON report of one command (without the `sim` section: engine statistics
and wall time are not results). Run with --update after an intended change, and say why in
the commit message.
"""
import argparse
import json
import os
import subprocess
import sys

# name -> hopsim arguments (paths relative to the source tree).
# The runs are hopsim regress's suite (tests/golden/suite.json); explain outputs only here.
GOLDENS = {
    "llama3-70b-cp-explain": ["explain", "configs/experiments/llama3-70b-cp.json",
                              "--set", "workload.seq_len=131072", "--set", "parallel.cp=8"],
    "deepseek-v3-moe-ep64-explain": ["explain", "configs/experiments/deepseek-v3-moe-ep64.json"],
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../golden/suite.json"),
          encoding="utf-8") as _f:
    for _name, _entry in json.load(_f).items():
        _experiment = os.path.normpath(os.path.join("tests/golden", _entry["experiment"]))
        GOLDENS[_name] = ["run", _experiment] + [a for kv in _entry.get("set", [])
                                                 for a in ("--set", kv)]


def report(hopsim, source_dir, args):
    extra = ["--no-wall-time"] if args[0] == "run" else []
    out = subprocess.run([hopsim, *args, "--json", *extra], cwd=source_dir, capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"hopsim {' '.join(args)} exited {out.returncode}: {out.stderr}")
    result = json.loads(out.stdout)
    result.pop("sim", None)
    return result


def differences(expected, actual, path=""):
    """Paths where two JSON values differ (numbers exactly: the simulator is deterministic)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in expected or key not in actual:
                yield f"{path}/{key}: only in {'actual' if key in actual else 'golden'}"
            else:
                yield from differences(expected[key], actual[key], f"{path}/{key}")
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (e, a) in enumerate(zip(expected, actual)):
            yield from differences(e, a, f"{path}/{i}")
    elif expected != actual:
        yield f"{path or '/'}: golden {json.dumps(expected)[:80]}, now {json.dumps(actual)[:80]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hopsim", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--update", action="store_true", help="rewrite the goldens")
    parser.add_argument("names", nargs="*", help="goldens to check (default: all)")
    args = parser.parse_args()
    hopsim = os.path.abspath(args.hopsim)
    failed = 0
    for name in args.names or sorted(GOLDENS):
        path = os.path.join(args.source_dir, "tests/golden", name + ".json")
        actual = report(hopsim, args.source_dir, GOLDENS[name])
        if args.update:
            with open(path, "w") as f:
                json.dump(actual, f, indent=1)
                f.write("\n")
            print(f"updated {path}")
            continue
        with open(path) as f:
            expected = json.load(f)
        diffs = list(differences(expected, actual))
        for d in diffs[:20]:
            print(f"{name}: {d}", file=sys.stderr)
        failed += bool(diffs)
        print(f"{name}: {'differs' if diffs else 'same'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
