#!/usr/bin/env python3
"""Writes a big `flows` experiment twice, as a JSON flow list and as a flows CSV (make bench).

Usage: flow_list.py DIR [--gpus 1024] [--bytes 1048576] [--uneven] [--mixed]

All pairs among the first GPUS GPUs of h100-dgx-2048 (GPUS x (GPUS - 1) flows: 1,047,552 for
1,024), BYTES each: bench case (c) as an input file; --uneven: from 1/512 to 2 x BYTES by a
fixed hash of (src, dst), so that nearly every flow finishes at its own time (as in case g);
--mixed (with --uneven): bench case (m)'s shape, those flows beside one ring all-reduce per GPU
index of a node (2 x (nodes - 1) steps of 4 MiB flows, each step after the one before it, ring r
starting r x 50 us late). Writes DIR/flows.json (the flows listed) and DIR/flows-csv.json naming
DIR/flows.csv (the same flows, columns id, src, dst, bytes, start_us, after), and prints both
experiments' paths.
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
    parser.add_argument("--mixed", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    def size(s, d):
        mixed = ((s * 1_000_003 + d) * 2_654_435_761) % 2**32 >> 22  # 0 to 1023
        return args.bytes * (1 + mixed) // 512 if args.uneven else args.bytes

    # (id, src, dst, bytes, start_us, after)
    pairs = [(s, d) for s in range(args.gpus) for d in range(args.gpus) if s != d]
    flows = [(i, s, d, size(s, d), 0, None) for i, (s, d) in enumerate(pairs)]
    if args.mixed:
        per_node = 8
        nodes = args.gpus // per_node
        for r in range(per_node):
            previous = None
            for step in range(2 * (nodes - 1)):
                current = []
                for n in range(nodes):
                    src, dst = n * per_node + r, (n + 1) % nodes * per_node + r
                    after = None if previous is None else previous[n]
                    flows.append((len(flows), src, dst, 1 << 22, 50 * r if step == 0 else 0, after))
                    current.append(len(flows) - 1)
                previous = current
    head = {"name": "flow-list", "cluster": "h100-dgx-2048", "seed": 1}

    def listed_one(i, s, d, b, start, after):
        extra = (f', "id": "{i}", "start_us": {start}' if args.mixed else "") + (
            f', "after": ["{after}"]' if after is not None else "")
        return f'{{"src": {s}, "dst": {d}, "bytes": {b}{extra}}}'

    listed = ",\n".join(listed_one(*f) for f in flows)
    with open(os.path.join(args.dir, "flows.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(head)[:-1] + ', "workload": {"kind": "flows", "flows": [\n')
        f.write(listed + "\n]}}\n")
    with open(os.path.join(args.dir, "flows.csv"), "w", encoding="utf-8") as f:
        if args.mixed:
            f.write("id,src,dst,bytes,start_us,after\n")
            f.writelines(f"{i},{s},{d},{b},{t},{'' if a is None else a}\n"
                         for i, s, d, b, t, a in flows)
        else:
            f.write("src,dst,bytes\n")
            f.writelines(f"{s},{d},{b}\n" for _, s, d, b, _, _ in flows)
    with open(os.path.join(args.dir, "flows-csv.json"), "w", encoding="utf-8") as f:
        json.dump(dict(head, workload={"kind": "flows", "flows_file": "flows.csv"}), f)
    print(os.path.join(args.dir, "flows.json"), os.path.join(args.dir, "flows-csv.json"))


if __name__ == "__main__":
    main()
