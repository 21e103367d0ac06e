#!/usr/bin/env python3
"""Tests tools/plot_sweep.py on small synthetic sweep CSVs (CTest test plot.sweep).

Usage: plot_sweep_test.py --source-dir DIR
Runs DIR/tools/plot_sweep.py with this interpreter on a one-key sweep and on a two-key sweep
with an invalid point, and checks the PNG files it writes; then checks that a CSV without the
sweep columns, a missing file and --metric nonexistent exit 2 with a message naming the file.
Exit status: 0 passed, 1 failed, 77 skipped (neither this interpreter nor /usr/bin/python3 has
matplotlib).
"""

import argparse
import os
import subprocess
import sys
import tempfile

TIMEOUT_S = 120
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
METRICS = ("step_time_s,compute_s,comm_s,exposed_comm_s,compute_comm_ratio,bytes_ib,"
           "bytes_nvlink,imbalance,wall_s,status,error")

ONE_KEY = f"""point,workload.tokens_per_gpu,{METRICS}
0,256,0.00126,0.00070,0.00057,0.00054,1.22,86575104,494419968,3.18,0.05,ok,
2,1024,0.00455,0.00234,0.00229,0.00220,1.02,345977856,1973895168,3.13,0.12,ok,
1,512,0.00233,0.00122,0.00115,0.00109,1.07,173042688,987936768,3.13,0.06,ok,
"""

TWO_KEYS = f"""point,parallel.ep,workload.routing.distribution,{METRICS}
3,8,zipf,0.00157,0.00101,0.00061,0.00055,1.67,0,773283840,2.33,0.01,ok,
0,3,uniform,,,,,,,,,0.002,invalid,"parallel.ep=3: 3 does not divide 16, so: invalid"
1,3,zipf,,,,,,,,,0.002,invalid,"parallel.ep=3: 3 does not divide 16, so: invalid"
2,8,uniform,0.00124,0.00086,0.00042,0.00037,2.04,0,818463744,1.01,0.01,ok,
4,16,uniform,0.00116,0.00067,0.00054,0.00048,1.25,175408128,1005892608,1.02,0.08,ok,
5,16,zipf,0.00233,0.00122,0.00115,0.00109,1.07,173042688,987936768,3.13,0.04,ok,
"""

# hopsim sweep's columns since the per-token figures: cp and dp move together (a --grid), the
# routing varies on its own; the best tokens/s per GPU (point 2) is not the fastest step.
RANKED = ("point,parallel.cp,parallel.dp,workload.moe.routing.distribution,step_time_s,gpus,"
          "tokens,tokens_per_s_per_gpu,model_tflops_per_gpu,mfu,compute_s,comm_s,"
          "exposed_comm_s,compute_comm_ratio,bytes_ib,bytes_nvlink,imbalance,wall_s,status,"
          "error\n"
          "0,1,16,uniform,0.120,16,262144,136533,300,0.30,0.100,0.030,0.020,3.3,0,10,1.0,0.1,ok,\n"
          "1,1,16,zipf,0.130,16,262144,126030,280,0.28,0.100,0.040,0.030,2.5,0,10,1.2,0.1,ok,\n"
          "2,4,4,uniform,0.028,16,65536,146285,320,0.32,0.020,0.010,0.008,2.0,0,10,1.0,0.1,ok,\n"
          "3,4,4,zipf,0.031,16,65536,132129,290,0.29,0.020,0.012,0.011,1.7,0,10,1.3,0.1,ok,\n"
          "4,8,2,uniform,0.018,16,32768,113777,250,0.25,0.010,0.009,0.008,1.1,0,10,1.0,0.1,ok,\n"
          "5,8,2,zipf,,,,,,,,,,,,,,0.1,invalid,too few tokens\n")

NOT_A_SWEEP = "name,value\nalpha,1\n"


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


PYTHON = sys.executable


def interpreter_with_matplotlib():
    """This interpreter if it has matplotlib, else Debian's /usr/bin/python3 if that has it
    (python3-matplotlib serves the system interpreter), else None."""
    for python in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(python) and subprocess.run(
                [python, "-c", "import matplotlib"], capture_output=True, check=False).returncode == 0:
            return python
    return None


def plot(script, *args):
    """Runs plot_sweep.py; returns (exit status, stdout, stderr)."""
    command = [PYTHON, script, *args]
    try:
        p = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                           check=False)
    except subprocess.TimeoutExpired:
        raise Failure(f"timed out after {TIMEOUT_S} s: {' '.join(command)}") from None
    return p.returncode, p.stdout, p.stderr


def check_plots(script, csv_path, out, expected, absent, *extra):
    """Plots csv_path into out; checks the expected PNGs are written and listed, absent not."""
    rc, stdout, stderr = plot(script, csv_path, "--out", out, *extra)
    expect(rc == 0, f"{csv_path}: exited {rc}: {stderr.strip()}")
    listed = stdout.split()
    for name in expected:
        path = os.path.join(out, name)
        expect(path in listed, f"{csv_path}: stdout does not list {path}: {stdout!r}")
        expect(os.path.isfile(path) and os.path.getsize(path) > 0, f"{path}: missing or empty")
        with open(path, "rb") as f:
            expect(f.read(len(PNG_SIGNATURE)) == PNG_SIGNATURE, f"{path}: not a PNG file")
    for name in absent:
        expect(not os.path.exists(os.path.join(out, name)), f"{csv_path}: wrote {name}")


def check_user_error(script, csv_path, *extra, mentions=()):
    """A user error: exit 2, a message naming the file, no traceback."""
    rc, _, stderr = plot(script, csv_path, *extra)
    where = f"plot_sweep.py {csv_path} {' '.join(extra)}"
    expect(rc == 2, f"{where}: exited {rc}, expected 2: {stderr.strip()}")
    expect("Traceback" not in stderr, f"{where}: printed a traceback:\n{stderr}")
    for text in (csv_path, *mentions):
        expect(text in stderr, f"{where}: message does not mention {text!r}: {stderr.strip()}")


def run_tests(script, tmp):
    one = write(os.path.join(tmp, "one_key.csv"), ONE_KEY)
    two = write(os.path.join(tmp, "two_keys.csv"), TWO_KEYS)
    check_plots(script, one, os.path.join(tmp, "out1", "nested"),
                expected=("breakdown.png", "line.png"), absent=("heatmap.png",))
    check_plots(script, two, os.path.join(tmp, "out2"),
                expected=("breakdown.png", "heatmap.png"), absent=("line.png",))
    check_plots(script, one, os.path.join(tmp, "out3"), ("line.png",), (),
                "--metric", "imbalance")  # not in seconds: a second y axis
    out = os.path.join(tmp, "out_bad")
    check_user_error(script, write(os.path.join(tmp, "not_a_sweep.csv"), NOT_A_SWEEP),
                     "--out", out)
    check_user_error(script, os.path.join(tmp, "no_such.csv"), "--out", out)
    check_user_error(script, one, "--out", out, "--metric", "nonexistent",
                     mentions=("nonexistent",))
    check_ranked(script, write(os.path.join(tmp, "ranked.csv"), RANKED), tmp)
    check_without_matplotlib(script, one, tmp)


def described(stdout, name):
    """What plot_sweep.py printed after a file's path: "(x: ...; best: point N)"."""
    for line in stdout.splitlines():
        if line.split("  (")[0].endswith(name):
            return line.split("  (", 1)[1].rstrip(")")
    raise Failure(f"{name} not listed: {stdout!r}")


def check_ranked(script, ranked, tmp):
    """Keys that move together make one axis; the default metric is tokens/s per GPU and its
    best point is marked, on the heatmap and on the breakdown; --x and --y choose the axes."""
    rc, stdout, stderr = plot(script, ranked, "--out", os.path.join(tmp, "ranked"))
    expect(rc == 0, f"{ranked}: exited {rc}: {stderr}")
    what = described(stdout, "heatmap.png")
    expect(what == "x: cp, dp; y: distribution; best: point 2", f"heatmap: {what}")
    what = described(stdout, "breakdown.png")  # the breakdown marks the same best point
    expect(what.endswith("; best: point 2"), f"breakdown: {what}")
    rc, stdout, stderr = plot(script, ranked, "--out", os.path.join(tmp, "ranked_xy"), "--x",
                              "workload.moe.routing.distribution", "--y", "parallel.dp",
                              "--metric", "step_time_s")
    what = described(stdout, "heatmap.png")
    expect(rc == 0 and what == "x: distribution; y: cp, dp; best: point 4",
           f"--x/--y, step time: exit {rc}, {what}, {stderr}")
    what = described(stdout, "breakdown.png")
    expect(what.endswith("; best: point 4"), f"breakdown, step time: {what}")
    check_user_error(script, ranked, "--out", tmp, "--x", "parallel.cp", "--y", "parallel.dp",
                     mentions=("move together",))
    check_user_error(script, ranked, "--out", tmp, "--x", "parallel.tp", mentions=("not a varied",))


def check_without_matplotlib(script, csv_path, tmp):
    """An interpreter without matplotlib (-S: no site-packages) reruns the script with one that
    has it; told not to search, it says what to install for itself."""
    command = [PYTHON, "-S", script, csv_path, "--out", os.path.join(tmp, "fallback")]
    p = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    expect(p.returncode == 0 and "has no matplotlib; using" in p.stderr and
           "line.png" in p.stdout, f"{' '.join(command)}: exit {p.returncode}, {p.stderr}")
    env = dict(os.environ, HOPSIM_PLOT_SWEEP_REEXEC="1")
    p = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
                       env=env)
    expect(p.returncode == 2 and "-m pip install matplotlib" in p.stderr and
           "Traceback" not in p.stderr and csv_path not in p.stderr,
           f"no matplotlib anywhere: exit {p.returncode}, {p.stderr}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--source-dir", required=True, help="the hopsim source tree")
    args = parser.parse_args()
    global PYTHON
    PYTHON = interpreter_with_matplotlib()
    if PYTHON is None:
        print("matplotlib missing: skipped")
        return 77
    script = os.path.join(args.source_dir, "tools", "plot_sweep.py")
    try:
        expect(os.path.isfile(script), f"{script}: not found")
        with tempfile.TemporaryDirectory(prefix="plot_sweep_test.") as tmp:
            run_tests(script, tmp)
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    print("plot_sweep: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
