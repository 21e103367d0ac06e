#!/usr/bin/env python3
"""A mutation fuzzer over the shipped configs (make fuzz; CI runs it briefly).

Each case takes a shipped experiment with its cluster and model inlined, mutates it (values
swapped for extremes or other types, keys dropped or added, lists grown or emptied, deep
nesting, duplicate keys, broken text) and runs `hopsim run` or `hopsim explain` on it,
preferably a sanitizer build. A case fails when the program
  - exits with anything but 0 or 2 (1 is allowed only for "tasks never ran"),
  - prints a sanitizer report (AddressSanitizer, UndefinedBehaviorSanitizer, LeakSanitizer),
  - runs longer than --timeout seconds of CPU time, or twelve times as long as the unmutated
    experiment when that is longer (a mutation that leaves an experiment as slow as it was is
    not a hang, nor one that multiplies a count by 10: 126 layers made 1,260 run ten times as
    long, a big valid input); CPU time, not wall time, so that a busy machine (other jobs, a
    build) does not make a slow case look hung. A case that waits without using the CPU is stopped at 20
    times the limit in wall time and reported as blocked,
  - exits 2 with other than exactly one line on stderr, or that line longer than 2,000 chars.
Failing inputs are written to --crashes DIR with the command that failed. Each experiment runs
once unmutated first; one that takes more than --timeout of CPU that way (the EP64 layers under the
sanitizers) is left out, and the run says which: its mutations could not tell a hang from a
big valid input. Lighter experiments of the same kinds cover their parsers and checks.

Besides experiments (run, explain), a share of the cases fuzz the other inputs hopsim reads:
calibration tables (check-calibration against a cluster, and run with the table), sweeps
(--vary over a mutated key and mutated values), regression suites and goldens (regress over a
folder with a mutated suite.json or expected report), sweep CSVs (sweep-merge), profiler traces
and kernel rules (profile-check) and Chakra trace files (one rank's file of the shipped example
mutated byte by byte, replayed with run). There exit 1
is allowed where the command means it: regress's CHANGED, sweep-merge's unwritable output.

Usage: fuzz_configs.py --hopsim BIN --source-dir DIR [--seconds N | --cases N] [--seed N]
                       [--jobs N] [--timeout S] [--crashes DIR]
       fuzz_configs.py --self-test
"""
import argparse
import concurrent.futures
import copy
import glob
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

EXTREMES = [0, -1, 1, 2, 3, 7, 1.5, -0.5, 1e-12, 1e9, 1e12, 1e15, 1e18, 1e300, -1e300,
            2**31, 2**31 - 1, 2**32, 2**53, 2**62, 2**63 - 1, 2**64, 10**25, "1", "", None, True,
            [], {}, [1, 2], {"x": 1}]
SANITIZER_MARKS = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "UndefinedBehavior")


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """The CPU time (user + system) process `pid` has used so far, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


# A mutated case may take this many times its unmutated experiment's CPU time: mutate_value
# multiplies numbers by up to 10, which a count (layers, micro-batches) turns into ten times the
# work; the rest is margin.
BASELINE_FACTOR = 12


def run_child(args, env, timeout, stdin=None):
    """Runs `args`: (exit code, stdout, stderr, CPU seconds, None), or (None, "", "", CPU
    seconds, why) when it used more than `timeout` seconds of CPU, or waited 20 x `timeout`
    in wall time without using it (blocked), and was killed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(args, stdout=out, stderr=err, stdin=stdin, env=env)
        start, pause, why = time.monotonic(), 0.005, None
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            cpu = cpu_seconds(p.pid)
            if cpu > timeout:
                why = f"hang: over {timeout:.0f} s of CPU"
            elif time.monotonic() - start > 20 * timeout:
                why = f"hang: blocked over {20 * timeout:.0f} s, {cpu:.1f} s of CPU"
            if why:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(pause)
            pause = min(2 * pause, 0.1)
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait
        cpu = usage.ru_utime + usage.ru_stime
        if why:
            return None, "", "", cpu, why
        out.seek(0)
        err.seek(0)
        return (p.returncode, out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace"), cpu, None)


PRESET_FOLDERS = {"cluster": "clusters", "model": "models", "calibration": "calibration"}


def referenced(source_dir, experiment, key, value):
    """The file an experiment's cluster, model or calibration names: a preset by name (no '/'
    and no ".json") in the source tree's configs/, else a path beside the experiment."""
    if "/" not in value and not value.endswith(".json"):
        return os.path.join(source_dir, "configs", PRESET_FOLDERS[key], value + ".json")
    return os.path.normpath(os.path.join(os.path.dirname(experiment), value))


def load_seeds(source_dir):
    """Every shipped experiment, with its cluster and model files inlined."""
    seeds = []
    for path in sorted(glob.glob(os.path.join(source_dir, "configs/experiments/*.json")) +
                       glob.glob(os.path.join(source_dir, "configs/validation/*.json"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for key in ("cluster", "model"):
            if isinstance(doc.get(key), str):
                with open(referenced(source_dir, path, key, doc[key]), encoding="utf-8") as f:
                    doc[key] = json.load(f)
        if isinstance(doc.get("calibration"), str):
            doc["calibration"] = referenced(source_dir, path, "calibration", doc["calibration"])
        workload = doc.get("workload", {})
        if workload.get("kind") == "chakra":  # its trace files, from anywhere
            workload["trace"] = os.path.normpath(os.path.join(os.path.dirname(path),
                                                              workload["trace"]))
        seeds.append(doc)
    return seeds


def paths(doc, prefix=()):
    """Every (path, value) inside doc, down to 20 levels."""
    yield prefix, doc
    if len(prefix) >= 20:
        return
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:50]):
            yield from paths(v, prefix + (i,))


def set_at(doc, path, value):
    if not path:
        return value
    target = doc
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return doc


def mutate_value(rng, value):
    roll = rng.random()
    if isinstance(value, (int, float)) and not isinstance(value, bool) and roll < 0.5:
        return rng.choice([value * rng.choice([0, -1, 2, 10, 1000, 1e6, 1e12]), value + 1,
                           value - 1, rng.choice(EXTREMES)])
    if isinstance(value, list) and roll < 0.4:
        if value and rng.random() < 0.5:
            return value * rng.choice([2, 10, 100])
        return rng.choice([[], value[: len(value) // 2], value + value[:1]])
    return copy.deepcopy(rng.choice(EXTREMES))


def mutate(rng, doc):
    """One structure-aware mutation, or a few; returns JSON text (maybe broken on purpose)."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        places = list(paths(doc))
        path, value = rng.choice(places)
        roll = rng.random()
        if roll < 0.6:
            doc = set_at(doc, path, mutate_value(rng, value))
        elif roll < 0.7 and isinstance(value, dict) and value:
            del value[rng.choice(list(value))]
        elif roll < 0.8 and isinstance(value, dict):
            value[rng.choice(["bytes", "kind", "nodes", "extra", "byts", "peak_Gbps"])] = \
                rng.choice(EXTREMES)
        elif roll < 0.85:  # deep nesting, spliced into the text below
            doc = set_at(doc, path, "__deep_%d__" % rng.choice([10, 200, 5000, 100000]))
        elif roll < 0.9 and isinstance(value, dict) and value:
            doc = set_at(doc, path, {"__dup__": True, **value})
    text = json.dumps(doc)
    while '"__deep_' in text:
        start = text.index('"__deep_')
        end = text.index('__"', start + 8) + 3
        depth = int(text[start + 8:end - 3])
        text = text[:start] + "[" * depth + "0" + "]" * depth + text[end:]
    roll = rng.random()
    if roll < 0.05:
        text = text[: rng.randrange(len(text))]
    elif roll < 0.1:
        i = rng.randrange(len(text))
        text = text[:i] + chr(rng.randrange(32, 127)) + text[i + 1:]
    elif roll < 0.15 and text.startswith("{"):
        key = rng.choice(["name", "seed", "workload"])
        text = '{"%s": 1, ' % key + text[1:]  # a duplicate key, kept by the parser otherwise
    return text.replace('"__dup__": true, ', "", 1) if "__dup__" in text else text


def mutate_doc_text(rng, doc):
    """mutate() for any JSON document (a calibration table, a suite, a report)."""
    return mutate(rng, doc)


def dotted_keys(doc):
    """The dotted keys of doc's scalar values, as --vary names them."""
    out = []
    for path, value in paths(doc):
        if path and not isinstance(value, (dict, list)) and all(isinstance(p, str) for p in path):
            out.append(".".join(path))
    return out or ["seed"]


def vary_argument(rng, doc):
    """A --vary KEY=VALUES with a real or mutated key and mutated values or range."""
    key = rng.choice(dotted_keys(doc))
    roll = rng.random()
    if roll < 0.15:
        key = rng.choice(["", "nosuch.key", key + ".x", key.upper(), "a\nb", "." + key])
    values = [json.dumps(mutate_value(rng, 1)) for _ in range(rng.choice([1, 2, 3]))]
    if rng.random() < 0.2:
        return f"{key}={rng.choice(['1:8:2', '0:8:2', '8:1:2', '1:1e9:1.0001', '1:4:1', 'a:b:c'])}"
    if rng.random() < 0.1:
        return rng.choice([key, f"={values[0]}", f"{key}=", f"{key}=,", f"{key}=1,,2"])
    return f"{key}={','.join(values)}"


def csv_text(rng, key):
    """A sweep CSV, mutated: header and rows as `hopsim sweep` writes them, then broken."""
    header = f"point,{key},step_time_s,status,error"
    rows = [f"{i},{i + 1},{0.001 * (i + 1)},ok," for i in range(rng.choice([0, 1, 3]))]
    text = "\n".join([header] + rows) + "\n"
    roll = rng.random()
    if roll < 0.3 and len(text) > 1:
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice([",", "\n", '"', "x", "9" * 12, ""]) + text[i + 1:]
    elif roll < 0.45:
        text = text[:-1]  # a cut last row
    elif roll < 0.55:
        text = rng.choice(["", "\n", "point\n", "x,y\n1,2\n", header + "\n" + "1," * 1000 + "\n"])
    return text


def mutate_bytes(rng, data):
    """A binary file with a few bytes changed, cut, inserted or repeated."""
    data = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4])):
        roll, at = rng.random(), rng.randrange(max(len(data), 1))
        if roll < 0.3:
            data[at:at + 1] = bytes([rng.randrange(256)])
        elif roll < 0.5:
            del data[at:]
        elif roll < 0.7:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 9])))
        elif roll < 0.85:
            data[at:at] = data[at:at + rng.choice([2, 16, 64])] * rng.choice([2, 50])
        else:
            data[at:at + 1] = rng.choice([b"\xff", b"\x00", b"\x80"])
    return bytes(data)


class Surfaces:
    """Cases over the inputs besides experiments; each returns (files {name: text}, argv tail
    with {name} placeholders, the exit codes that are fine besides 0 and 2)."""

    def __init__(self, source_dir, seeds):
        self.source_dir = source_dir
        self.seeds = seeds
        with open(os.path.join(source_dir, "configs/calibration/h100-published.json"),
                  encoding="utf-8") as f:
            self.table = json.load(f)
        with open(os.path.join(source_dir, "tests/golden/flows-tour.json"), encoding="utf-8") as f:
            self.golden = json.load(f)
        self.cluster = os.path.join(source_dir, "configs/clusters/h100-dgx.json")
        self.light = os.path.join(source_dir, "configs/experiments/flows-tour.json")
        self.layer = os.path.join(source_dir, "configs/experiments/llama3-70b-cp.json")
        with open(os.path.join(source_dir, "tests/data/profile/kineto-moe-layer.json"),
                  encoding="utf-8") as f:
            self.trace = json.load(f)
        with open(os.path.join(source_dir, "configs/profile/kernel-classes.json"),
                  encoding="utf-8") as f:
            self.rules = json.load(f)
        self.chakra = os.path.join(source_dir, "configs/experiments/chakra-moe-layer.json")
        self.et = []
        for rank in range(4):
            with open(os.path.join(source_dir, f"configs/chakra/example/moe-layer.{rank}.et"),
                      "rb") as f:
                self.et.append(f.read())

    def draw(self, rng):
        kind = rng.choice(["calibration", "calibration-run", "sweep", "regress", "sweep-merge",
                           "profile-trace", "profile-rules", "chakra-trace"])
        if kind == "chakra-trace":  # one rank's file mutated byte by byte
            files = {f"t.{r}.et": data for r, data in enumerate(self.et)}
            victim = rng.randrange(len(self.et))
            files[f"t.{victim}.et"] = mutate_bytes(rng, self.et[victim])
            return (files, ["run", self.chakra, "--set", "workload.trace={dir}/t",
                            "--no-wall-time"], ())
        if kind == "calibration":
            return ({"table.json": mutate_doc_text(rng, self.table)},
                    ["check-calibration", "{table.json}", "--cluster", self.cluster], ())
        if kind == "calibration-run":
            return ({"table.json": mutate_doc_text(rng, self.table)},
                    ["run", self.layer, "--set", "calibration={table.json}", "--no-wall-time"], ())
        if kind == "sweep":
            doc = rng.choice(self.seeds)
            light = doc.get("workload", {}).get("kind") in ("flows", "attention_layer")
            experiment = json.dumps(doc) if light else open(self.light, encoding="utf-8").read()
            return ({"e.json": experiment},
                    ["sweep", "{e.json}", "--vary", vary_argument(rng, json.loads(experiment)),
                     "--out", "{out.csv}"], ())  # up to 5 points: run_surface allows 5 runs
        if kind in ("profile-trace", "profile-rules"):  # against the lightest experiment
            trace = mutate_doc_text(rng, self.trace) if kind == "profile-trace" else \
                json.dumps(self.trace)
            rules = mutate_doc_text(rng, self.rules) if kind == "profile-rules" else \
                json.dumps(self.rules)
            return ({"trace.json": trace, "rules.json": rules},
                    ["profile-check", "{trace.json}", self.light, "--rules", "{rules.json}"], ())
        if kind == "regress":
            suite = {"flows-tour": {"experiment": self.light}}
            files = {"suite.json": json.dumps(suite), "flows-tour.json": json.dumps(self.golden)}
            name = rng.choice(["suite.json", "flows-tour.json"])
            doc = suite if name == "suite.json" else self.golden
            files[name] = mutate_doc_text(rng, doc)
            return files, ["regress", "{dir}"], (1,)  # 1: a changed golden
        ins = {f"in{i}.csv": csv_text(rng, "parallel.cp") for i in range(rng.choice([1, 2, 3]))}
        return ins, ["sweep-merge", "{out.csv}"] + ["{%s}" % n for n in ins], ()


def free_name(folder, is_json):
    """The first case-N (case-N.json) not yet in `folder`: a run keeps earlier runs' cases."""
    os.makedirs(folder, exist_ok=True)
    n = 0
    while any(os.path.exists(os.path.join(folder, f"case-{n}{ext}")) for ext in ("", ".json")):
        n += 1
    return os.path.join(folder, f"case-{n}" + (".json" if is_json else ""))


class Baselines:
    """How long each unmutated experiment takes, measured once, the first time it is drawn."""

    def __init__(self, hopsim, workdir, limit):
        self.hopsim, self.workdir, self.limit = hopsim, workdir, limit
        self.times, self.locks, self.guard = {}, {}, threading.Lock()

    def measure(self, index, doc):
        """(seconds or None when slower than the limit, None), or the first time only,
        (seconds, outcome) when the experiment itself fails: that failure is reported once."""
        with self.guard:
            lock = self.locks.setdefault(index, threading.Lock())
        with lock:
            if index in self.times:
                return self.times[index], None
            outcome = run_case(self.hopsim, json.dumps(doc), "run", self.limit, self.workdir)
            slow = outcome[1] is not None and outcome[1].startswith("hang")
            self.times[index] = None if slow else outcome[4]
            return self.times[index], (outcome[:4] if outcome[1] is not None and not slow else None)


def fuzz_case(hopsim, baselines, index, seed_doc, text, command, timeout, workdir):
    seconds, failed = baselines.measure(index, seed_doc)
    if failed is not None:
        return failed
    if seconds is None:
        return None, None, None, "skipped"
    return run_case(hopsim, text, command, max(timeout, BASELINE_FACTOR * seconds), workdir)[:4]


def run_case(hopsim, text, command, timeout, workdir):
    """(input path, problem or None, command, exit code, CPU seconds)."""
    fd, path = tempfile.mkstemp(suffix=".json", dir=workdir)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    args = [hopsim, command, path] + (["--no-wall-time"] if command == "run" else [])
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    rc, out, err, cpu, hung = run_child(args, env, timeout)
    if hung:
        return path, hung, args, None, cpu
    problem = verdict(rc, out, err)
    if problem is None:
        os.unlink(path)
    return path, problem, args, rc, cpu


def run_surface(hopsim, files, tail, allowed, timeout, workdir):
    """A Surfaces case in a folder of its own; the folder is kept when it fails."""
    folder = tempfile.mkdtemp(dir=workdir)
    names = {"dir": folder, "out.csv": os.path.join(folder, "out.csv")}
    for name, text in files.items():
        names[name] = os.path.join(folder, name)
        with open(names[name], "wb" if isinstance(text, bytes) else "w",
                  encoding=None if isinstance(text, bytes) else "utf-8") as f:
            f.write(text)
    def fill(arg):
        for name, value in names.items():
            arg = arg.replace("{%s}" % name, value)
        return arg
    args = [hopsim] + [fill(a) for a in tail]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    if tail[0] == "sweep":  # a sweep runs up to 5 points (vary_argument), each its own run
        timeout *= 5
    rc, out, err, _, hung = run_child(args, env, timeout, stdin=subprocess.DEVNULL)
    if hung:
        return folder, hung, args, None
    problem = verdict(rc, out, err, allowed)
    if problem is None:
        for root, dirs, names_in in os.walk(folder, topdown=False):
            for n in names_in:
                os.unlink(os.path.join(root, n))
            for d in dirs:
                os.rmdir(os.path.join(root, d))
        os.rmdir(folder)
    return folder, problem, args, rc


def verdict(rc, out, err, allowed=()):
    if any(mark in err for mark in SANITIZER_MARKS):
        return "sanitizer: " + err.strip().splitlines()[0][:300]
    if rc == 0:
        return None
    if rc == 2:
        lines = err.split("\n")
        if len(lines) != 2 or lines[1] or not lines[0]:
            return f"exit 2 without exactly one line on stderr: {err[:300]!r}"
        if len(lines[0]) > 2000:
            return f"exit 2 with a {len(lines[0])}-character line"
        return None
    if rc == 1 and "tasks never ran" in err:
        return None
    if rc in allowed and "internal error" not in err:
        return None
    return f"exit {rc}: {err.strip()[:300]!r}"


def self_test():
    """The verdicts are not vacuous: each kind of failure is caught, good outcomes pass."""
    cases = [((0, "", ""), None), ((2, "", "x.json: /a: bad\n"), None),
             ((1, "", "x.json: 3 tasks never ran (a dependency cycle)\n"), None),
             ((2, "", "two\nlines\n"), "exit 2 without"), ((2, "", "x" * 3000 + "\n"), "exit 2 with"),
             ((134, "", "hopsim: assertion failed\n"), "exit 134"),
             ((1, "", "hopsim: internal error: bad_alloc\n"), "exit 1"),
             ((0, "", "==1==ERROR: AddressSanitizer: heap-use-after-free"), "sanitizer"),
             ((2, "", "x.cpp:3:5: runtime error: signed integer overflow\n"), "sanitizer")]
    bad = [(c, want) for c, want in cases
           if (verdict(*c) is None) != (want is None) or (want and not verdict(*c).startswith(want))]
    print(f"self-test: {len(cases) - len(bad)} of {len(cases)} verdicts right")
    # The hang rule counts CPU time: a busy loop is stopped past the limit, a child that sleeps
    # as long is not (a loaded machine stretches wall time, not CPU time), and a child's output
    # and exit code come back whole.
    spin = run_child([sys.executable, "-c", "while True: pass"], None, 0.3)
    sleep = run_child([sys.executable, "-c", "import time, sys; time.sleep(0.6); "
                       "print('out'); sys.stderr.write('err'); sys.exit(2)"], None, 0.3)
    clock = [("busy loop stopped on CPU time", spin[0] is None and spin[4].startswith(
                  "hang: over") and spin[3] >= 0.3),
             ("sleeping child not stopped", sleep[:3] == (2, "out\n", "err") and sleep[4] is None)]
    for name, ok in clock:
        print(f"self-test: {name}: {'ok' if ok else 'WRONG'}")
    return 1 if bad or not all(ok for _, ok in clock) else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hopsim", required=True)
    parser.add_argument("--source-dir", default=".")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--cases", type=int, default=0,
                        help="stop after this many cases instead of --seconds")
    parser.add_argument("--surfaces", type=float, default=0.3,
                        help="share of cases over calibration, sweep, regress and sweep-merge")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=10)
    parser.add_argument("--crashes", default="fuzz-crashes")
    parser.add_argument("--progress", type=int, default=0,
                        help="print a progress line every N cases (0: only the summary)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seeds = load_seeds(os.path.abspath(args.source_dir))
    surfaces = Surfaces(os.path.abspath(args.source_dir), seeds)
    budget = f"{args.cases} cases" if args.cases else f"{args.seconds:.0f} s"
    print(f"fuzzing {len(seeds)} experiments and 8 other surfaces for {budget}, seed {args.seed}, "
          f"{args.jobs} jobs", flush=True)
    failures = []
    cases = 0
    outcomes = {"ok": 0, "bad input": 0, "other": 0}
    deadline = time.monotonic() + (1e12 if args.cases else args.seconds)
    submitted = 0

    def more():
        return time.monotonic() < deadline and (not args.cases or submitted < args.cases)
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        pending = set()
        hopsim = os.path.abspath(args.hopsim)
        baselines = Baselines(hopsim, workdir, args.timeout)
        while more() or pending:
            while more() and len(pending) < 2 * args.jobs:
                submitted += 1
                if rng.random() < args.surfaces:
                    files, tail, allowed = surfaces.draw(rng)
                    pending.add(pool.submit(run_surface, hopsim, files, tail, allowed,
                                            args.timeout, workdir))
                    continue
                index = rng.randrange(len(seeds))
                text = mutate(rng, seeds[index])
                command = "explain" if rng.random() < 0.15 else "run"
                pending.add(pool.submit(fuzz_case, hopsim, baselines, index, seeds[index], text,
                                        command, args.timeout, workdir))
            done, pending = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                path, problem, command, rc = future.result()
                if rc == "skipped":
                    continue
                cases += 1
                if args.progress and cases % args.progress == 0:
                    print(f"progress: {cases} cases, {outcomes}, {len(failures)} failures",
                          flush=True)
                outcomes["ok" if rc == 0 else "bad input" if rc == 2 else "other"] += 1
                if problem is None:
                    continue
                kept = free_name(args.crashes, path.endswith(".json"))
                os.replace(path, kept)
                failures.append((kept, problem, command))
                print(f"FAIL {kept}: {problem}\n  command: {' '.join(command)}", flush=True)
    slow = sorted(seeds[i].get("name", "?") for i, t in baselines.times.items() if t is None)
    if slow:
        print(f"left out, slower than {args.timeout:.0f} s unmutated: {', '.join(slow)}")
    print(f"{cases} cases ({outcomes['ok']} ran, {outcomes['bad input']} refused as bad input, "
          f"{outcomes['other']} other), {len(failures)} failures (seed {args.seed})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
