#!/usr/bin/env python3
"""Writes a big `flows` experiment twice, as a JSON flow list and as a flows CSV (make bench).

Usage: flow_list.py DIR [--gpus 1024] [--bytes 1048576] [--uneven]

All pairs among the first GPUS GPUs of h100-dgx-2048 (GPUS x (GPUS - 1) flows: 1,047,552 for
1,024), BYTES each: bench case (c) as an input file; --uneven: from 1/512 to 2 x BYTES by a
fixed hash of (src, dst), so that nearly every flow finishes at its own time (as in case g). Writes DIR/flows.json (the flows listed)
and DIR/flows-csv.json naming DIR/flows.csv (the same flows, columns src, dst, bytes), and
prints both experiments' paths.
"""

import argparse
import json
import os


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--gpus", type=int, default=1024)
    parser.add_argument("--bytes", type=int, default=1 << 20)
    parser.add_argument("--uneven", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    def size(s, d):
        mixed = ((s * 1_000_003 + d) * 2_654_435_761) % 2**32 >> 22  # 0 to 1023
        return args.bytes * (1 + mixed) // 512 if args.uneven else args.bytes

    pairs = [(s, d, size(s, d)) for s in range(args.gpus) for d in range(args.gpus) if s != d]
    head = {"name": "flow-list", "cluster": "h100-dgx-2048", "seed": 1}
    listed = ",\n".join(f'{{"src": {s}, "dst": {d}, "bytes": {b}}}' for s, d, b in pairs)
    with open(os.path.join(args.dir, "flows.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(head)[:-1] + ', "workload": {"kind": "flows", "flows": [\n')
        f.write(listed + "\n]}}\n")
    with open(os.path.join(args.dir, "flows.csv"), "w", encoding="utf-8") as f:
        f.write("src,dst,bytes\n")
        f.writelines(f"{s},{d},{b}\n" for s, d, b in pairs)
    with open(os.path.join(args.dir, "flows-csv.json"), "w", encoding="utf-8") as f:
        json.dump(dict(head, workload={"kind": "flows", "flows_file": "flows.csv"}), f)
    print(os.path.join(args.dir, "flows.json"), os.path.join(args.dir, "flows-csv.json"))


if __name__ == "__main__":
    main()
