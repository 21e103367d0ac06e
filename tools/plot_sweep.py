#!/usr/bin/env python3
"""Plots a sweep CSV written by `hopsim sweep` as PNG files.

Usage: plot_sweep.py SWEEP.csv --out DIR [--metric step_time_s]

The CSV's varied keys are the columns between `point` and `step_time_s`. Writes into DIR
(created if missing), printing each file's path:
  breakdown.png  one stacked bar per point: compute, hidden communication
                 (comm_s - exposed_comm_s, at least 0) and exposed communication, in ms;
                 invalid and error points keep an empty, labelled slot;
  line.png       (exactly one varied key) the metric against that key, with compute_s and
                 exposed_comm_s as extra lines; log2 x axis for positive numbers that span a
                 factor of 4 or more;
  heatmap.png    (two or more varied keys) the metric over the first two keys, the minimum
                 over any further keys; cells without an ok point are blank.
Metrics whose names end in _s are plotted in ms. Points are ordered by point index; numeric
key values sort numerically, other values in order of first appearance.
Exit status: 0 plots written, 2 the CSV cannot be plotted (message on stderr).
"""

import argparse
import csv
import math
import os
import sys

REQUIRED = ("point", "step_time_s", "compute_s", "comm_s", "exposed_comm_s", "status")


class SweepError(Exception):
    """The input cannot be plotted; the message names the file."""


class Sweep:
    """A parsed sweep: varied keys, metric columns and rows (dicts) sorted by point index."""

    def __init__(self, path):
        self.path = path
        try:
            with open(path, newline="", encoding="utf-8") as f:
                lines = list(csv.reader(f))
        except OSError as e:
            raise SweepError(f"{path}: cannot read: {e.strerror}") from None
        except (UnicodeDecodeError, csv.Error) as e:
            raise SweepError(f"{path}: not a sweep CSV ({e})") from None
        header = lines[0] if lines else []
        missing = [c for c in REQUIRED if c not in header]
        if missing or header.index("point") > header.index("step_time_s"):
            raise SweepError(f"{path}: not a sweep CSV from `hopsim sweep` (header lacks "
                             f"{', '.join(missing) or 'point before step_time_s'})")
        self.keys = header[header.index("point") + 1:header.index("step_time_s")]
        self.metrics = [c for c in header[header.index("step_time_s"):]
                        if c not in ("status", "error")]
        self.rows = []
        for number, fields in enumerate(lines[1:], start=2):
            if not fields:
                continue
            if len(fields) != len(header):
                raise SweepError(f"{path}:{number}: {len(fields)} fields, header has "
                                 f"{len(header)}")
            row = dict(zip(header, fields))
            try:
                row["point"] = int(row["point"])
                if row["status"] == "ok":
                    for m in self.metrics:
                        row[m] = float(row[m])
            except ValueError as e:
                raise SweepError(f"{path}:{number}: {e}") from None
            self.rows.append(row)
        self.rows.sort(key=lambda r: r["point"])
        if not any(r["status"] == "ok" for r in self.rows):
            raise SweepError(f"{path}: no point has status ok: nothing to plot")

    def numeric(self, key):
        """Whether every value of a varied key is a number."""
        try:
            return all(math.isfinite(float(r[key])) for r in self.rows)
        except ValueError:
            return False

    def values(self, key):
        """The distinct values of a varied key: numerically sorted when all are numbers."""
        seen = list(dict.fromkeys(r[key] for r in self.rows))
        return sorted(seen, key=float) if self.numeric(key) else seen

    def short(self, key):
        """A key's last dotted component, or the whole key when that is ambiguous."""
        last = key.rsplit(".", 1)[-1]
        return last if [k.rsplit(".", 1)[-1] for k in self.keys].count(last) == 1 else key

    def label(self, row):
        """The varied values of a row, e.g. "ep=8, zipf" (numbers get their key's name)."""
        if not self.keys:
            return f"point {row['point']}"
        return ", ".join(f"{self.short(k)}={row[k]}" if self.numeric(k) else row[k]
                        for k in self.keys)


def unit(metric):
    """(scale, axis label with unit) for a metric column: seconds become ms, bytes MB."""
    if metric.endswith("_s"):
        return 1e3, f"{metric[:-2].replace('_', ' ')} (ms)"
    if metric.startswith("bytes_"):
        return 1e-6, f"{metric.replace('_', ' ')} (MB)"
    return 1.0, f"{metric.replace('_', ' ')} (dimensionless)"


def fmt(value):
    """A cell annotation: three significant digits."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def save(plt, fig, path):
    """Writes a figure as a PNG file and frees it."""
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_breakdown(plt, sweep, path):
    """Stacked bars of compute, hidden and exposed communication per point."""
    rows = sweep.rows
    compute, hidden, exposed, labels = [], [], [], []
    for r in rows:
        ok = r["status"] == "ok"
        compute.append(r["compute_s"] * 1e3 if ok else 0.0)
        hidden.append(max(r["comm_s"] - r["exposed_comm_s"], 0.0) * 1e3 if ok else 0.0)
        exposed.append(r["exposed_comm_s"] * 1e3 if ok else 0.0)
        labels.append(sweep.label(r))
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(min(max(6.0, 0.6 * len(rows) + 2), 40), 5.5))
    ax.bar(x, compute, label="compute", color="tab:blue")
    ax.bar(x, hidden, bottom=compute, label="hidden comm (overlapped)", color="tab:green")
    ax.bar(x, exposed, bottom=[c + h for c, h in zip(compute, hidden)],
           label="exposed comm", color="tab:red")
    top = max(c + h + e for c, h, e in zip(compute, hidden, exposed))
    ax.set_ylim(0, top * 1.25)  # room for the one-row legend
    for i, r in enumerate(rows):
        if r["status"] != "ok":
            ax.text(i, top * 0.03, f"({r['status']})", rotation=90, ha="center", va="bottom",
                    color="gray")
    rotation = 0 if len(rows) <= 3 else 30 if len(rows) <= 8 else 45
    ax.set_xticks(x, labels, rotation=rotation, ha="right" if rotation else "center",
                  rotation_mode="anchor", fontsize=8 if len(rows) > 12 else 9)
    ax.set_ylabel("time (ms)")
    bad = sum(r["status"] != "ok" for r in rows)
    note = f" ({bad} point(s) not ok: empty slots)" if bad else ""
    ax.set_title(f"Time breakdown per point{note}\n{os.path.basename(sweep.path)}")
    ax.legend(loc="upper left", ncol=3, fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    save(plt, fig, path)


def plot_line(plt, sweep, metric, path):
    """The metric (and compute_s, exposed_comm_s) against the one varied key."""
    key = sweep.keys[0]
    values = sweep.values(key)
    if sweep.numeric(key):
        xs = [float(v) for v in values]
        log2 = min(xs) > 0 and max(xs) >= 4 * min(xs)
    else:
        xs, log2 = list(range(len(values))), False  # categories, in first-appearance order
    by_value = {r[key]: r for r in sweep.rows}
    scale, ylabel = unit(metric)

    def series(column, factor):
        return [by_value[v][column] * factor if by_value[v]["status"] == "ok" else math.nan
                for v in values]

    fig, ax = plt.subplots(figsize=(7, 4.8))
    ax.plot(xs, series(metric, scale), "o-", color="black", lw=2, label=metric)
    extras = [c for c in ("compute_s", "exposed_comm_s") if c != metric]
    other = ax if scale == 1e3 else ax.twinx()
    for column, color in zip(extras, ("tab:blue", "tab:red")):
        other.plot(xs, series(column, 1e3), "s--", color=color, label=column)
    if other is not ax:
        other.set_ylabel("compute / exposed comm (ms)")
    if log2:
        ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [v if by_value[v]["status"] == "ok" else f"{v}\n({by_value[v]['status']})"
                       for v in values])
    ax.minorticks_off()
    ax.set_xlabel(key + (" (log2 scale)" if log2 else ""))
    ax.set_ylabel(ylabel)
    for axis in {ax, other}:  # headroom for the one-row legend
        axis.set_ylim(0, axis.get_ylim()[1] * 1.2)
    if not sweep.numeric(key):
        ax.set_xlim(-0.5, len(values) - 0.5)
    ax.set_title(f"{ylabel} vs {sweep.short(key)}\n{os.path.basename(sweep.path)}")
    handles = ax.get_legend_handles_labels()
    if other is not ax:
        handles = [a + b for a, b in zip(handles, other.get_legend_handles_labels())]
    other.legend(*handles, fontsize=8, loc="upper left", ncol=3)
    ax.grid(alpha=0.3)
    save(plt, fig, path)


def plot_heatmap(plt, sweep, metric, path):
    """The metric over the first two keys; the minimum over any further keys."""
    k1, k2 = sweep.keys[:2]
    rows_v, cols_v = sweep.values(k1), sweep.values(k2)
    scale, label = unit(metric)
    grid = [[math.nan] * len(cols_v) for _ in rows_v]
    notes = [["missing"] * len(cols_v) for _ in rows_v]
    for r in sweep.rows:
        i, j = rows_v.index(r[k1]), cols_v.index(r[k2])
        if r["status"] == "ok":
            value = r[metric] * scale
            grid[i][j] = value if math.isnan(grid[i][j]) else min(grid[i][j], value)
            notes[i][j] = fmt(grid[i][j])
        elif math.isnan(grid[i][j]):
            notes[i][j] = r["status"]
    size = (max(5.0, 1.3 * len(cols_v) + 3), max(3.5, 0.7 * len(rows_v) + 2.2))
    fig, ax = plt.subplots(figsize=size)
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    fig.colorbar(image, ax=ax, label=label)
    finite = [v for line in grid for v in line if not math.isnan(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    for i in range(len(rows_v)):
        for j in range(len(cols_v)):
            value = grid[i][j]
            dark = not math.isnan(value) and (value - low) <= 0.5 * (high - low)
            ax.text(j, i, notes[i][j], ha="center", va="center", fontsize=9,
                    color="white" if dark and high > low else "black")
    ax.set_xticks(range(len(cols_v)), cols_v)
    ax.set_yticks(range(len(rows_v)), rows_v)
    ax.set_xlabel(k2)
    ax.set_ylabel(k1)
    title = f"{label} by {sweep.short(k1)} and {sweep.short(k2)}"
    if len(sweep.keys) > 2:
        title += f"\nminimum over {', '.join(sweep.short(k) for k in sweep.keys[2:])}"
    ax.set_title(f"{title}\n{os.path.basename(sweep.path)}", fontsize=10)
    save(plt, fig, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("csv", help="sweep CSV written by `hopsim sweep --out`")
    parser.add_argument("--out", required=True, help="directory for the PNG files")
    parser.add_argument("--metric", default="step_time_s",
                        help="column for line.png / heatmap.png (default step_time_s)")
    args = parser.parse_args(argv)
    try:
        sweep = Sweep(args.csv)
        if args.metric not in sweep.metrics:
            raise SweepError(f"{args.csv}: unknown --metric {args.metric!r}; columns: "
                             f"{', '.join(sweep.metrics)}")
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise SweepError(f"{args.csv}: cannot plot: matplotlib is missing ({e}); install "
                             "python3-matplotlib") from None
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise SweepError(f"{args.csv}: cannot create --out {args.out}: {e.strerror}") from None
        plots = [("breakdown.png", lambda p: plot_breakdown(plt, sweep, p))]
        if len(sweep.keys) == 1:
            plots.append(("line.png", lambda p: plot_line(plt, sweep, args.metric, p)))
        elif len(sweep.keys) >= 2:
            plots.append(("heatmap.png", lambda p: plot_heatmap(plt, sweep, args.metric, p)))
        for name, plot in plots:
            path = os.path.join(args.out, name)
            try:
                plot(path)
            except OSError as e:
                raise SweepError(f"{args.csv}: cannot write {path}: {e.strerror}") from None
            print(path)
    except SweepError as e:
        print(f"plot_sweep: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
