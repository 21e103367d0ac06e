#!/usr/bin/env python3
"""Converts the flow list of a `flows` experiment from JSON to a flows CSV file.

Usage: flows_to_csv.py EXPERIMENT.json OUT.csv [--experiment NEW.json]

Writes OUT.csv (columns id, src, dst, bytes, start_us, after; docs/experiments.md, Big flow
lists) from EXPERIMENT.json's /workload/flows, and with --experiment a copy of the experiment
whose workload names OUT.csv in "flows_file" instead of listing the flows (OUT.csv's path is
written relative to NEW.json's folder). hopsim reads the CSV about 10 times faster than the
same flows as JSON, in a fraction of the memory. Values are copied as they are: hopsim checks
them when it reads the file. Exit status: 0 written, 2 the input is not a flows experiment
whose ids fit in a CSV (the reason on stderr).
"""

import argparse
import json
import os
import sys


def fail(message):
    print(f"flows_to_csv.py: {message}", file=sys.stderr)
    sys.exit(2)


def field(value, where):
    """A value as its CSV text; ids may hold no comma, quote, space or line break."""
    text = value if isinstance(value, str) else json.dumps(value)
    if any(c in text for c in ',"\n\r ') or (isinstance(value, str) and not text):
        fail(f"{where}: {json.dumps(value)} cannot be a CSV field (no commas, quotes, spaces)")
    return text


def rows(flows, path):
    """The CSV lines of `flows` (a JSON list), the header first."""
    yield "id,src,dst,bytes,start_us,after\n"
    for i, f in enumerate(flows):
        where = f"{path}: /workload/flows/{i}"
        if not isinstance(f, dict):
            fail(f"{where}: expected an object")
        after = f.get("after", [])
        if not isinstance(after, list):
            fail(f"{where}/after: expected an array of ids")
        cells = [field(f.get("id", str(i)), where + "/id")]
        for key in ("src", "dst", "bytes"):
            if key not in f:
                fail(f"{where}: missing \"{key}\"")
            cells.append(field(f[key], f"{where}/{key}"))
        cells.append(field(f.get("start_us", 0), where + "/start_us"))
        cells.append(" ".join(field(a, where + "/after") for a in after))
        yield ",".join(cells) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("experiment")
    parser.add_argument("out_csv")
    parser.add_argument("--experiment", dest="new_experiment", help="write the experiment "
                        "naming OUT.csv in flows_file here")
    args = parser.parse_args(argv)
    try:
        with open(args.experiment, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.experiment}: {e}")
    workload = doc.get("workload") if isinstance(doc, dict) else None
    if not isinstance(workload, dict) or workload.get("kind") != "flows":
        fail(f"{args.experiment}: /workload: not a workload of kind \"flows\"")
    flows = workload.get("flows")
    if not isinstance(flows, list) or not flows:
        fail(f"{args.experiment}: /workload/flows: expected a non-empty array of flows")
    with open(args.out_csv, "w", encoding="utf-8") as out:
        out.writelines(rows(flows, args.experiment))
    print(f"{args.out_csv}: {len(flows)} flows")
    if args.new_experiment:
        del workload["flows"]
        folder = os.path.dirname(os.path.abspath(args.new_experiment))
        workload["flows_file"] = os.path.relpath(os.path.abspath(args.out_csv), folder)
        if isinstance(doc.get("cluster"), str) and os.sep in doc["cluster"]:
            here = os.path.dirname(os.path.abspath(args.experiment))
            doc["cluster"] = os.path.relpath(os.path.join(here, doc["cluster"]), folder)
        with open(args.new_experiment, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        print(f"{args.new_experiment}: the experiment, reading {workload['flows_file']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
