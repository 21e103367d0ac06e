#!/usr/bin/env python3
"""Checks a hopsim report of workload kind "flows" against an independent fluid simulation.

Usage: check_report.py REPORT.json   (or "-" for stdin; the output of `hopsim run --json`
       or the report.json that `hopsim run --out DIR` writes)

The model, recomputed here in doubles without sharing code with the C++ solver:
  * a flow with an empty `links` list is local: latency 0, it finishes at start_s;
  * every other flow pays latency_s, which must equal the sum of its links' latency_s plus
    the report's software_overhead_s (to 1e-9 relative), then joins the network at
    start_s + latency_s (start_s already includes any wait for `after` flows);
  * a zero-byte flow finishes when it joins;
  * the rates of the flows in the network are the max-min fair allocation over the link
    capacities links[name].bandwidth_Bps (progressive filling), recomputed at every join
    and finish; a flow finishes when its bytes have moved.

A flow's error is |finish_s - expected| / max(finish_s, 2e-6 s): 1e-6 relative, with an
absolute floor of 2e-12 s (hopsim rounds each event up to a whole picosecond).
Exit status: 0 all flows agree, 1 some flow disagrees, 2 the report cannot be checked.
"""

import json
import math
import sys

FINISH_RELATIVE = 1e-6
FINISH_ABSOLUTE_S = 2e-12
LATENCY_RELATIVE = 1e-9
# Events closer than this (relative to the current time) are handled as one instant.
TIE_RELATIVE = 1e-13


class ReportError(Exception):
    """The report is not a flows report this checker can read."""


def number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ReportError(f"{where}: expected a finite number, got {json.dumps(value)}")
    return float(value)


def read_links(report):
    links = report.get("links")
    if not isinstance(links, dict):
        raise ReportError('missing "links" object (is this a report of workload kind "flows"?)')
    capacity, latency = {}, {}
    for name, link in links.items():
        if not isinstance(link, dict):
            raise ReportError(f"links.{name}: expected an object")
        capacity[name] = number(link.get("bandwidth_Bps"), f"links.{name}.bandwidth_Bps")
        latency[name] = number(link.get("latency_s"), f"links.{name}.latency_s")
        if capacity[name] <= 0:
            raise ReportError(f"links.{name}.bandwidth_Bps: must be > 0, got {capacity[name]}")
    return capacity, latency


def read_flows(report, link_names):
    flows = report.get("flows")
    if not isinstance(flows, list):
        raise ReportError('missing "flows" array')
    out = []
    for i, f in enumerate(flows):
        if not isinstance(f, dict):
            raise ReportError(f"flows[{i}]: expected an object")
        fid = str(f.get("id", i))
        route = f.get("links")
        if not isinstance(route, list) or not all(isinstance(n, str) for n in route):
            raise ReportError(f"flow {fid}: links: expected an array of link names")
        for name in route:
            if name not in link_names:
                raise ReportError(f'flow {fid}: link "{name}" is not in the report\'s "links"')
        if len(set(route)) != len(route):
            raise ReportError(f"flow {fid}: a link appears twice in its route")
        nbytes = number(f.get("bytes"), f"flow {fid}: bytes")
        if nbytes < 0:
            raise ReportError(f"flow {fid}: bytes: must be >= 0, got {nbytes}")
        out.append({
            "id": fid,
            "bytes": nbytes,
            "start": number(f.get("start_s"), f"flow {fid}: start_s"),
            "latency": number(f.get("latency_s"), f"flow {fid}: latency_s"),
            "finish": number(f.get("finish_s"), f"flow {fid}: finish_s"),
            "links": route,
        })
    return out


def max_min_rates(active, routes, capacity):
    """Progressive filling: raise all unfixed rates together; when links saturate, fix the
    rates of their flows at the fair share. Returns {flow: rate}."""
    on_link = {}
    for f in active:
        for link in routes[f]:
            on_link.setdefault(link, []).append(f)
    left = {link: capacity[link] for link in on_link}
    count = {link: len(fs) for link, fs in on_link.items()}
    rate = {}
    while len(rate) < len(active):
        shares = {link: left[link] / count[link] for link in on_link if count[link] > 0}
        level = min(shares.values())
        for link, share in shares.items():
            if share > level * (1 + 1e-12):
                continue
            for f in on_link[link]:
                if f in rate:
                    continue
                rate[f] = level
                for other in routes[f]:
                    left[other] -= level
                    count[other] -= 1
    return rate


def simulate(flows, capacity):
    """Returns the expected finish time of every flow (same order)."""
    finish = [None] * len(flows)
    routes = [f["links"] for f in flows]
    joins = []
    for i, f in enumerate(flows):
        if not f["links"]:
            finish[i] = f["start"]
        elif f["bytes"] == 0:
            finish[i] = f["start"] + f["latency"]
        else:
            joins.append((f["start"] + f["latency"], i))
    joins.sort()
    remaining = {}
    rate = {}
    now = 0.0
    next_join = 0
    while next_join < len(joins) or remaining:
        t_join = joins[next_join][0] if next_join < len(joins) else math.inf
        t_finish = min((now + remaining[f] / rate[f] for f in remaining), default=math.inf)
        t = min(t_join, t_finish)
        tie = TIE_RELATIVE * max(abs(t), 1e-9)
        dt = t - now
        for f in list(remaining):
            if now + remaining[f] / rate[f] <= t + tie:
                del remaining[f]
                finish[f] = t
            else:
                remaining[f] -= rate[f] * dt
        now = t
        while next_join < len(joins) and joins[next_join][0] <= t + tie:
            remaining[joins[next_join][1]] = flows[joins[next_join][1]]["bytes"]
            next_join += 1
        rate = max_min_rates(list(remaining), routes, capacity) if remaining else {}
    return finish


def check(report, out):
    """Prints a line per mismatch, then a summary; returns the exit status."""
    if report.get("workload") != "flows":
        raise ReportError(f'workload is {json.dumps(report.get("workload"))}, expected "flows"')
    overhead = number(report.get("software_overhead_s"), "software_overhead_s")
    capacity, link_latency = read_links(report)
    flows = read_flows(report, capacity)
    failures = 0
    for f in flows:
        expected = overhead + sum(link_latency[n] for n in f["links"]) if f["links"] else 0.0
        if abs(f["latency"] - expected) > LATENCY_RELATIVE * abs(expected):
            failures += 1
            print(f"flow {f['id']}: latency_s {f['latency']!r}, expected {expected!r} "
                  f"({len(f['links'])} link latencies + software_overhead_s)", file=out)
    expected_finish = simulate(flows, capacity)
    worst = 0.0
    for f, expected in zip(flows, expected_finish):
        error = abs(f["finish"] - expected) / max(abs(f["finish"]),
                                                  FINISH_ABSOLUTE_S / FINISH_RELATIVE)
        worst = max(worst, error)
        if error > FINISH_RELATIVE:
            failures += 1
            print(f"flow {f['id']}: finish_s {f['finish']!r}, expected {expected!r} "
                  f"(relative error {error:.3g})", file=out)
    if failures:
        print(f"{failures} mismatches in {len(flows)} flows", file=out)
        return 1
    print(f"{len(flows)} flows checked, max relative error {worst:.3g}", file=out)
    return 0


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path = argv[1]
    try:
        if path == "-":
            report = json.load(sys.stdin)
        else:
            with open(path, encoding="utf-8") as f:
                report = json.load(f)
        if not isinstance(report, dict):
            raise ReportError("expected a JSON object")
        return check(report, sys.stdout)
    except (OSError, ValueError, ReportError) as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
