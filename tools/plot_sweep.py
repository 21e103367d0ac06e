#!/usr/bin/env python3
"""Plots a sweep CSV written by `hopsim sweep` as PNG files.

Usage: plot_sweep.py SWEEP.csv --out DIR [--metric METRIC] [--x KEY] [--y KEY]

The CSV's varied keys are the columns between `point` and `step_time_s`. Keys that move
together (a --grid of cp with dp: each value of one goes with one value of the other) make one
axis, labelled with both. Writes into DIR (created if missing), printing each file's path and
what it shows:
  breakdown.png  one bar per point: the busiest GPU's compute with its exposed communication
                 stacked on it (hidden communication overlaps compute, so it is not stacked),
                 in ms, and a tick at the step time; the best point's bar outlined and its
                 label marked; invalid and error points keep an empty, labelled slot; the
                 numbers it plots are kept in its PNG text chunk `hopsim-data` (JSON), which
                 the docs check compares with the sweep now;
  line.png       (one axis) the metric against it, the best point circled; log2 x axis for
                 positive numbers that span a factor of 4 or more;
  heatmap.png    (two or more axes) the metric over two axes (--x, --y: a key of each; default
                 the first two), the best over any further axes, the best cell outlined.
The metric (--metric) defaults to tokens_per_s_per_gpu where the sweep has it (the figure a
sweep over GPU counts must be ranked by), else step_time_s. Higher is better for
tokens_per_s_per_gpu, model_tflops_per_gpu, mfu and compute_comm_ratio, lower for the others.
Metrics whose names end in _s are plotted in ms.
Without matplotlib in this interpreter the script reruns itself with one that has it (a python3
on PATH, or /usr/bin/python3), or says what to install for this one.
Exit status: 0 plots written, 2 the CSV cannot be plotted or matplotlib is missing (message on
stderr).
"""

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys

REQUIRED = ("point", "step_time_s", "compute_s", "comm_s", "exposed_comm_s", "status")
HIGHER_IS_BETTER = ("tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu", "compute_comm_ratio")
REEXEC = "HOPSIM_PLOT_SWEEP_REEXEC"  # set when rerun with another interpreter: no second search


class SweepError(Exception):
    """The input cannot be plotted; the message says why."""


def number(text):
    """A metric field as a number; blank (a kind without that figure) is NaN."""
    return float(text) if text != "" else math.nan


class Sweep:
    """A parsed sweep: varied keys, their axes, metric columns and rows (dicts) by point."""

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
                        if c not in ("status", "error", "sweep_id")]
        self.rows = []
        for line_number, fields in enumerate(lines[1:], start=2):
            if not fields:
                continue
            if len(fields) != len(header):
                raise SweepError(f"{path}:{line_number}: {len(fields)} fields, header has "
                                 f"{len(header)}")
            row = dict(zip(header, fields))
            try:
                row["point"] = int(row["point"])
                if row["status"] == "ok":
                    for m in self.metrics:
                        row[m] = number(row[m])
            except ValueError as e:
                raise SweepError(f"{path}:{line_number}: {e}") from None
            self.rows.append(row)
        self.rows.sort(key=lambda r: r["point"])
        self.ok = [r for r in self.rows if r["status"] == "ok"]
        if not self.ok:
            raise SweepError(f"{path}: no point has status ok: nothing to plot")
        self.axes = self.group_keys()

    def has(self, metric):
        """Whether some ok row has a value of the metric."""
        return metric in self.metrics and any(not math.isnan(r[metric]) for r in self.ok)

    def group_keys(self):
        """The axes: varied keys in order, those that move together (one-to-one over the rows)
        joined into one axis."""
        axes = []
        for key in self.keys:
            for axis in axes:
                pairs = {(r[axis[0]], r[key]) for r in self.rows}
                if (len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})):
                    axis.append(key)
                    break
            else:
                axes.append([key])
        return [tuple(a) for a in axes]

    def axis_of(self, key):
        """The axis holding a varied key; SweepError when the key is not varied."""
        for axis in self.axes:
            if key in axis:
                return axis
        raise SweepError(f"{self.path}: {key!r} is not a varied key; they are "
                         f"{', '.join(self.keys)}")

    def numeric(self, key):
        """Whether every value of a varied key is a number."""
        try:
            return all(math.isfinite(float(r[key])) for r in self.rows)
        except ValueError:
            return False

    def value(self, axis, row):
        """A row's value on an axis: its keys' values, joined."""
        return ", ".join(row[k] for k in axis)

    def values(self, axis):
        """The distinct values of an axis: numerically by its first key when that is numeric,
        else in order of first appearance."""
        seen = list(dict.fromkeys(self.value(axis, r) for r in self.rows))
        if self.numeric(axis[0]):
            first = {self.value(axis, r): float(r[axis[0]]) for r in self.rows}
            return sorted(seen, key=lambda v: first[v])
        return seen

    def short(self, key):
        """A key's last dotted component, or the whole key when that is ambiguous."""
        last = key.rsplit(".", 1)[-1]
        return last if [k.rsplit(".", 1)[-1] for k in self.keys].count(last) == 1 else key

    def axis_name(self, axis):
        """An axis's label: its keys' short names, joined."""
        return ", ".join(self.short(k) for k in axis)

    def label(self, row):
        """The varied values of a row, e.g. "ep=8, zipf" (numbers get their key's name)."""
        if not self.keys:
            return f"point {row['point']}"
        return ", ".join(f"{self.short(k)}={row[k]}" if self.numeric(k) else row[k]
                        for k in self.keys)

    def best(self, metric):
        """The ok row with the best value of the metric."""
        rows = [r for r in self.ok if not math.isnan(r[metric])]
        if not rows:
            return None
        pick = max if metric in HIGHER_IS_BETTER else min
        return pick(rows, key=lambda r: r[metric])


def better(metric, a, b):
    """The better of two values of a metric (NaN loses)."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return max(a, b) if metric in HIGHER_IS_BETTER else min(a, b)


def unit(metric):
    """(scale, axis label with unit) for a metric column: seconds become ms, bytes MB."""
    if metric.endswith("_s"):
        return 1e3, f"{metric[:-2].replace('_', ' ')} (ms)"
    if metric.startswith("bytes_"):
        return 1e-6, f"{metric.replace('_', ' ')} (MB)"
    if metric == "tokens_per_s_per_gpu":
        return 1.0, "tokens/s per GPU"
    if metric == "model_tflops_per_gpu":
        return 1.0, "model TFLOPs per GPU"
    return 1.0, f"{metric.replace('_', ' ')} (dimensionless)"


def fmt(value):
    """A cell annotation: three significant digits."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def save(plt, fig, path, data=None):
    """Writes a figure as a PNG file and frees it. DATA (the numbers plotted) goes into the
    PNG's text chunk `hopsim-data` as JSON, so that a check can compare them without pixels."""
    fig.tight_layout()
    metadata = {"hopsim-data": json.dumps(data)} if data is not None else None
    fig.savefig(path, dpi=120, metadata=metadata)
    plt.close(fig)


def breakdown_data(sweep):
    """What breakdown.png plots, per point: its label, compute, exposed communication and step
    time in ms (an invalid or error point: 0, 0 and NaN)."""
    compute, exposed, step, labels = [], [], [], []
    for r in sweep.rows:
        ok = r["status"] == "ok"
        compute.append(r["compute_s"] * 1e3 if ok else 0.0)
        exposed.append(r["exposed_comm_s"] * 1e3 if ok else 0.0)
        step.append(r["step_time_s"] * 1e3 if ok else math.nan)
        labels.append(sweep.label(r))
    return labels, compute, exposed, step


def plot_breakdown(plt, sweep, metric, path):
    """Per point, compute with exposed communication on it, and a tick at the step time; the
    best point (by the metric) outlined."""
    rows = sweep.rows
    best = sweep.best(metric)
    labels, compute, exposed, step = breakdown_data(sweep)
    ticks = [("best: " if r is best else "") + label for r, label in zip(rows, labels)]
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(min(max(6.0, 0.6 * len(rows) + 2), 40), 5.5))
    ax.bar(x, compute, label="compute (busiest GPU)", color="tab:blue")
    ax.bar(x, exposed, bottom=compute, label="exposed comm", color="tab:red")
    ax.plot(x, step, "_", color="black", markersize=18, mew=2, label="step time")
    top = max([c + e for c, e in zip(compute, exposed)] +
              [s for s in step if not math.isnan(s)])
    if best is not None:
        i = rows.index(best)
        ax.bar([i], [compute[i] + exposed[i]], fill=False, edgecolor="tab:orange", linewidth=2.5,
               label=f"best {metric}")
    ax.set_ylim(0, top * 1.35)  # room for the two-row legend
    for i, r in enumerate(rows):
        if r["status"] != "ok":
            ax.text(i, top * 0.03, f"({r['status']})", rotation=90, ha="center", va="bottom",
                    color="gray")
    rotation = 0 if len(rows) <= 3 else 30 if len(rows) <= 8 else 45
    ax.set_xticks(x, ticks, rotation=rotation, ha="right" if rotation else "center",
                  rotation_mode="anchor", fontsize=8 if len(rows) > 12 else 9)
    ax.set_ylabel("time (ms)")
    bad = sum(r["status"] != "ok" for r in rows)
    note = f" ({bad} point(s) not ok: empty slots)" if bad else ""
    ax.set_title(f"Time breakdown per point{note}\n{os.path.basename(sweep.path)}")
    ax.legend(loc="upper left", ncol=2, fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    save(plt, fig, path, {"labels": labels, "compute_ms": compute, "exposed_ms": exposed,
                          "step_ms": [None if math.isnan(v) else v for v in step]})
    return (f"compute + exposed communication per point; best: point "
            f"{best['point'] if best else 'none'}")


def plot_line(plt, sweep, axis, metric, path):
    """The metric against the one axis, the best point circled."""
    values = sweep.values(axis)
    numeric = len(axis) == 1 and sweep.numeric(axis[0])
    if numeric:
        xs = [float(v) for v in values]
        log2 = min(xs) > 0 and max(xs) >= 4 * min(xs)
    else:
        xs, log2 = list(range(len(values))), False  # categories, in first-appearance order
    by_value = {sweep.value(axis, r): r for r in sweep.rows}
    scale, ylabel = unit(metric)

    def series(column, factor):
        return [by_value[v][column] * factor if by_value[v]["status"] == "ok" else math.nan
                for v in values]

    fig, ax = plt.subplots(figsize=(7, 4.8))
    ax.plot(xs, series(metric, scale), "o-", color="black", lw=2, label=metric)
    best = sweep.best(metric)
    if best is not None:
        at = xs[values.index(sweep.value(axis, best))]
        ax.plot([at], [best[metric] * scale], "o", ms=16, mfc="none", mec="tab:orange", mew=2.5,
                label="best")
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
    ax.set_xlabel(sweep.axis_name(axis) + (" (log2 scale)" if log2 else ""))
    ax.set_ylabel(ylabel)
    for axes in {ax, other}:  # headroom for the one-row legend
        axes.set_ylim(0, axes.get_ylim()[1] * 1.2)
    if not numeric:
        ax.set_xlim(-0.5, len(values) - 0.5)
    ax.set_title(f"{ylabel} vs {sweep.axis_name(axis)}\n{os.path.basename(sweep.path)}")
    handles = ax.get_legend_handles_labels()
    if other is not ax:
        handles = [a + b for a, b in zip(handles, other.get_legend_handles_labels())]
    other.legend(*handles, fontsize=8, loc="upper left", ncol=3)
    ax.grid(alpha=0.3)
    save(plt, fig, path)
    return f"x: {sweep.axis_name(axis)}; best: point {best['point'] if best else 'none'}"


def plot_heatmap(plt, sweep, x_axis, y_axis, metric, path):
    """The metric over two axes, the best over any others, the best cell outlined."""
    rows_v, cols_v = sweep.values(y_axis), sweep.values(x_axis)
    scale, label = unit(metric)
    grid = [[math.nan] * len(cols_v) for _ in rows_v]
    notes = [["missing"] * len(cols_v) for _ in rows_v]
    for r in sweep.rows:
        i, j = rows_v.index(sweep.value(y_axis, r)), cols_v.index(sweep.value(x_axis, r))
        if r["status"] == "ok" and not math.isnan(r[metric]):
            grid[i][j] = better(metric, grid[i][j], r[metric] * scale)
            notes[i][j] = fmt(grid[i][j])
        elif math.isnan(grid[i][j]):
            notes[i][j] = r["status"] if r["status"] != "ok" else "n/a"
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
    best = sweep.best(metric)
    if best is not None:
        i, j = rows_v.index(sweep.value(y_axis, best)), cols_v.index(sweep.value(x_axis, best))
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="tab:orange", lw=3))
    ax.set_xticks(range(len(cols_v)), cols_v)
    ax.set_yticks(range(len(rows_v)), rows_v)
    ax.set_xlabel(sweep.axis_name(x_axis))
    ax.set_ylabel(sweep.axis_name(y_axis))
    title = f"{label} by {sweep.axis_name(x_axis)} and {sweep.axis_name(y_axis)}"
    others = [a for a in sweep.axes if a not in (x_axis, y_axis)]
    if others:
        title += f"\nbest over {', '.join(sweep.axis_name(a) for a in others)}"
    ax.set_title(f"{title}\n{os.path.basename(sweep.path)} (best outlined)", fontsize=10)
    save(plt, fig, path)
    return (f"x: {sweep.axis_name(x_axis)}; y: {sweep.axis_name(y_axis)}; best: point "
            f"{best['point'] if best else 'none'}")


def interpreters():
    """Other Pythons that may have matplotlib: each python3* on PATH, then /usr/bin/python3
    (Debian's python3-matplotlib serves that one)."""
    found = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        for name in ("python3",) + tuple(f"python3.{minor}" for minor in range(20, 7, -1)):
            path = shutil.which(name, path=folder) if folder else None
            if path and path not in found:
                found.append(path)
    if os.path.exists("/usr/bin/python3") and "/usr/bin/python3" not in found:
        found.append("/usr/bin/python3")
    return found


def import_pyplot(argv):
    """matplotlib.pyplot, with the Agg backend. Without matplotlib here, reruns this script
    with another interpreter that has it (and does not return), or raises SweepError saying
    what to install for this one."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError as e:
        missing = e
    if not os.environ.get(REEXEC):
        for python in interpreters():
            check = subprocess.run([python, "-c", "import matplotlib"], capture_output=True,
                                   check=False)
            if check.returncode == 0:
                print(f"plot_sweep: {sys.executable} has no matplotlib; using {python}",
                      file=sys.stderr)
                sys.stderr.flush()
                os.environ[REEXEC] = "1"
                os.execv(python, [python, os.path.abspath(__file__), *argv])
    version = ".".join(str(v) for v in sys.version_info[:2])
    debian = (" (on Debian or Ubuntu, `apt-get install python3-matplotlib` serves /usr/bin/python3)"
              if sys.executable != "/usr/bin/python3" else
              "; on Debian or Ubuntu: apt-get install python3-matplotlib")
    raise SweepError(f"matplotlib is missing for {sys.executable} (Python {version}: {missing}) "
                     f"and no other python3 on PATH has it; install it for this interpreter: "
                     f"{sys.executable} -m pip install matplotlib{debian}")


def plots_of(sweep, args):
    """The plots to draw, as (file name, function of (plt, path) returning a description)."""
    if args.metric is None:
        args.metric = "tokens_per_s_per_gpu" if sweep.has("tokens_per_s_per_gpu") else "step_time_s"
    if args.metric not in sweep.metrics:
        raise SweepError(f"{args.csv}: unknown --metric {args.metric!r}; columns: "
                         f"{', '.join(sweep.metrics)}")
    if not sweep.has(args.metric):
        raise SweepError(f"{args.csv}: no ok point has a value of {args.metric} (this kind has "
                         f"none); pick another --metric")
    plots = [("breakdown.png", lambda plt, p: plot_breakdown(plt, sweep, args.metric, p))]
    axes = list(sweep.axes)
    x_axis = sweep.axis_of(args.x) if args.x else None
    y_axis = sweep.axis_of(args.y) if args.y else None
    if x_axis is not None and x_axis == y_axis:
        raise SweepError(f"{args.csv}: --x {args.x} and --y {args.y} move together (one axis)")
    rest = [a for a in axes if a not in (x_axis, y_axis)]
    x_axis = x_axis or rest.pop(0) if axes else None
    if len(axes) == 1:
        plots.append(("line.png", lambda plt, p: plot_line(plt, sweep, x_axis, args.metric, p)))
    elif len(axes) >= 2:
        y_axis = y_axis or [a for a in rest if a != x_axis][0]
        plots.append(("heatmap.png", lambda plt, p: plot_heatmap(plt, sweep, x_axis, y_axis,
                                                                 args.metric, p)))
    return plots


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("csv", help="sweep CSV written by `hopsim sweep --out`")
    parser.add_argument("--out", required=True, help="directory for the PNG files")
    parser.add_argument("--metric", help="column for line.png / heatmap.png (default "
                        "tokens_per_s_per_gpu where the sweep has it, else step_time_s)")
    parser.add_argument("--x", help="a varied key: its axis is the heatmap's x (or the line's)")
    parser.add_argument("--y", help="a varied key: its axis is the heatmap's y")
    args = parser.parse_args(argv)
    try:
        sweep = Sweep(args.csv)
        plots = plots_of(sweep, args)
        plt = import_pyplot(argv)
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise SweepError(f"cannot create --out {args.out}: {e.strerror}") from None
        for name, plot in plots:
            path = os.path.join(args.out, name)
            try:
                what = plot(plt, path)
            except OSError as e:
                raise SweepError(f"cannot write {path}: {e.strerror}") from None
            print(f"{path}  ({what})")
    except SweepError as e:
        print(f"plot_sweep: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
