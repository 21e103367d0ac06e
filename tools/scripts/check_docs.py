#!/usr/bin/env python3
"""Runs every transcript in README.md and docs/*.md and checks that the numbers printed there
are what the program prints (ctest docs.transcripts).

A transcript is a fenced code block whose first line starts with "$ ": each "$ COMMAND" (with
"\\" continuation lines) runs with bash in a scratch folder that links the source tree's
configs/, tools/, docs/ and tests/ and the build's bin/ (as build/bin), one folder per
document, so that a command may read what an earlier one wrote. The lines after a command are
its expected output: each must be printed by it (stdout or stderr, in order within each), with
"..." standing for lines left out. Numbers are compared as printed; wall times are not
("in 0.4 s", "0.482 s" after "in", "0.40 M events/s", the wall_s column of a sweep CSV). An
HTML comment
"<!-- docs-check: run COMMAND -->" runs COMMAND silently before the next transcript (to make
what it reads); "<!-- docs-check: skip REASON -->" skips the next one.

Numbers in prose and tables are checked too (docs_values.py: "<!-- docs-check: cmd NAME
COMMAND -->" and "<!-- docs-check: values ... -->" before a paragraph or table tie each of its
numbers to a field of a command's output, or claim it as an input, a cited figure, an earlier
version's result or a wall time), in the same scratch folder after the document's transcripts;
then each marked number is edited by one digit in turn and must fail. "<!-- docs-check: image
PNG SWEEP.csv -->" compares the numbers PNG plots (plot_sweep.py keeps them in it) with the
sweep a transcript wrote; --update-images redraws it. --unmarked lists what no mark covers.

Usage: check_docs.py --source-dir DIR --bin DIR [--update-images] [FILE.md...]
                                                          (default: README.md docs/*.md)
       check_docs.py --source-dir DIR --unmarked [FILE.md...]
       check_docs.py --self-test [--source-dir DIR --bin DIR]
Exit status: 0 all transcripts match, 1 a mismatch (each printed with the command, the
expected line and the output), 2 usage.
"""

import argparse
import csv
import glob
import os
import re
import subprocess
import sys
import tempfile

import docs_values

TIMEOUT_S = 300
WALL = [re.compile(r"\bin [0-9.]+ s\b"), re.compile(r"\b[0-9.]+ points/s\b"),
        re.compile(r"\b[0-9.]+ (M )?events/s\b"),
        re.compile(r"about [0-9.]+ s left")]


def transcripts(text):
    """(line number, [commands to run first], skip reason or None, [(command, [expected])])."""
    lines = text.split("\n")
    out, pending, skip = [], [], None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\s*<!-- docs-check: (run|skip)\s*(.*?)\s*-->", line)
        if m:
            if m.group(1) == "run":
                pending.append(m.group(2))
            else:
                skip = m.group(2) or "skipped"
        if line.startswith("```"):
            j = i + 1
            body = []
            while j < len(lines) and not lines[j].startswith("```"):
                body.append(lines[j])
                j += 1
            if body and body[0].startswith("$ "):
                out.append((i + 2, pending, skip, commands_of(body)))
                pending, skip = [], None
            i = j
        i += 1
    return out


def commands_of(body):
    """[(command, expected lines)] of a transcript's body."""
    steps = []
    k = 0
    while k < len(body):
        command = body[k][2:]
        while command.endswith("\\") and k + 1 < len(body):
            k += 1
            command = command[:-1] + " " + body[k].strip()
        k += 1
        expected = []
        while k < len(body) and not body[k].startswith("$ "):
            expected.append(body[k])
            k += 1
        steps.append((command, expected))
    return steps


def normalize(line, wall_column):
    """A line with wall times blanked and trailing space removed."""
    for pattern in WALL:
        line = pattern.sub("<wall>", line)
    if wall_column is not None and line.count(",") > wall_column and not line.startswith("point,"):
        fields = next(csv.reader([line]))
        if len(fields) > wall_column:
            fields[wall_column] = "<wall>"
            line = ",".join(fields)
    return line.rstrip()


def wall_column_of(lines):
    for line in lines:
        if line.startswith("point,") and "wall_s" in line.split(","):
            return line.split(",").index("wall_s")
    return None


def matches(expected, actual):
    """Whether an expected line matches an actual one: equal, or a prefix of it where the
    document cut the line with "..." or "(...)" (ending in ': ...', '...' or '(...)'). A
    document's own annotation after two spaces and "# " is not printed, so it is dropped."""
    expected = re.sub(r"\s{2,}# .*$", "", expected)
    if expected.endswith("(...)"):
        return actual.startswith(expected[:-5].rstrip())
    if expected.endswith("...") and len(expected) > 3:
        return actual.startswith(expected[:-3].rstrip())
    if expected.endswith('..."'):
        return actual.startswith(expected[:-4])
    return expected == actual


def check_step(command, expected, stdout, stderr):
    """The expected lines not found in order in stdout or stderr, as messages."""
    wall = wall_column_of(expected + stdout)
    streams = [[normalize(l, wall) for l in stdout], [normalize(l, wall) for l in stderr]]
    at = [0, 0]
    problems = []
    for line in expected:
        if line.strip() == "...":
            continue
        want = normalize(line, wall)
        found = False
        for s in (0, 1):
            for k in range(at[s], len(streams[s])):
                if matches(want, streams[s][k]):
                    at[s] = k + 1
                    found = True
                    break
            if found:
                break
        if not found:
            problems.append(f"  expected: {line}")
    return problems


def scratch(source_dir, bin_dir):
    """A folder that sees the source tree's inputs and the build's programs."""
    tmp = tempfile.mkdtemp(prefix="docs-check.")
    for name in ("configs", "tools", "docs", "tests", "calibrate"):
        os.symlink(os.path.join(source_dir, name), os.path.join(tmp, name))
    os.makedirs(os.path.join(tmp, "build"))
    os.symlink(bin_dir, os.path.join(tmp, "build", "bin"))
    return tmp


def run(command, cwd):
    # Presets from the scratch folder's configs/, so that messages name them as they would
    # from the repository's root.
    env = dict(os.environ, HOPSIM_PRESETS=os.path.join(cwd, "configs"))
    p = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                       timeout=TIMEOUT_S, check=False, env=env)
    return p.returncode, p.stdout.splitlines(), p.stderr.splitlines()


def check_file(path, source_dir, bin_dir, mutate=True, update_images=False):
    """The mismatches of one document's transcripts and marked numbers; the count of commands
    run and of numbers marked. With MUTATE, every marked number is then edited by one digit in
    turn, and an edit the marks do not catch is a mismatch too."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = transcripts(text)
    problems, ran = [], 0
    if not found and "<!-- docs-check: values" not in text and \
            "<!-- docs-check: image" not in text:
        return problems, ran, 0
    cwd = scratch(source_dir, bin_dir)
    rel = os.path.relpath(path, source_dir)
    for line_number, setup, skip, steps in found:
        if skip is not None:
            continue
        for command in setup:
            rc, out, err = run(command, cwd)
            if rc != 0:
                problems.append(f"{rel}:{line_number}: setup `{command}` exited {rc}: "
                                f"{' '.join(err)[:300]}")
        for command, expected in steps:
            rc, out, err = run(command, cwd)
            ran += 1
            missing = check_step(command, expected, out, err)
            if rc not in (0, 1, 2) or missing:  # 2: the documented bad-input examples
                shown = "\n".join("    | " + l for l in (out + err)[:40])
                problems.append(f"{rel}:{line_number}: $ {command}\n  exit {rc}\n" +
                                "\n".join(missing) + f"\n  printed:\n{shown}")
    outputs, values = docs_values.Outputs(run, cwd), {}
    try:
        p, marked = docs_values.check_text(text, rel, outputs, values)
    except ValueError as e:
        return problems + [f"{rel}: {e}"], ran, 0
    problems += p + docs_values.check_images(text, rel, cwd, source_dir, update_images)
    ran += len(outputs.cache)
    if mutate and not p:
        for where, edited in docs_values.mutations(text):
            if not docs_values.check_text(edited, rel, outputs, values)[0]:
                problems.append(f"{rel}: {where}: a one-digit edit the marks do not catch")
    return problems, ran, marked


def self_test_file(source_dir, bin_dir):
    """A real transcript passes as printed and fails with one number edited; True if so."""
    command = "$ build/bin/hopsim run configs/experiments/flows-two-sharing.json"
    results = []
    for step in ("5.409 ms", "5.419 ms"):
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(f"```\n{command}\n...\nstep time      {step}\n```\n")
        problems, ran, _ = check_file(f.name, source_dir, bin_dir)
        os.remove(f.name)
        results.append((ran, len(problems)))
    print(f"a transcript as printed: {results[0]}, edited: {results[1]} (commands, mismatches)")
    return results == [(1, 0), (1, 1)] and self_test_values(source_dir, bin_dir)


def self_test_values(source_dir, bin_dir):
    """Marked prose passes as the program prints it; an edited number, an unmarked one, a
    marked one not written and a mark whose number is right but not the field's fail; every
    one-digit edit of the passing text fails."""
    head = ("<!-- docs-check: cmd two build/bin/hopsim run "
            "configs/experiments/flows-two-sharing.json --json --no-wall-time -->\n"
            "<!-- docs-check: values\n{}\ngiven 1: one\n-->\n")
    good = ("5.409 = two.step_time_s * 1e3\n2 = len(two.flows)",
            "Both of the 2 flows end at 5.409 ms, 1 GB each.")
    cases = [good,
             (good[0], good[1].replace("5.409", "5.419")),
             (good[0], good[1] + " 3 more."),
             (good[0] + "\n7 = len(two.flows)", good[1]),
             (good[0].replace("len(two.flows)", "len(two.flows) + 1"), good[1])]
    counts = []
    for marks, prose in cases:
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(head.format(marks) + prose + "\n")
        problems, _, marked = check_file(f.name, source_dir, bin_dir)
        os.remove(f.name)
        counts.append((marked, len(problems)))
    ok = counts == [(3, 0), (3, 1), (3, 1), (4, 1), (3, 1)]
    print(f"marked prose: as printed, edited, unmarked, marked not written, wrong field: "
          f"{counts} (marked, mismatches){'' if ok else ': FAILED'}")
    return ok


def self_test():
    """The checker is not vacuous: an edited number fails, wall times and cuts pass."""
    good = check_step("x", ["a 1.5 ms", "...", "simulated 3 events in 0.2 s"],
                      ["a 1.5 ms", "b", "simulated 3 events in 0.9 s"], [])
    edited = check_step("x", ["a 1.6 ms"], ["a 1.5 ms"], [])
    cut = check_step("x", ["4,24,,0.001,invalid,\"why: ...\""],
                     ["4,24,,0.003,invalid,\"why: because\""], [])
    csv = check_step("x", ["point,k,wall_s,status", "0,1,0.017,ok"],
                     ["point,k,wall_s,status", "0,1,0.5,ok"], [])
    csv_edit = check_step("x", ["point,k,wall_s,status", "0,2,0.017,ok"],
                          ["point,k,wall_s,status", "0,1,0.5,ok"], [])
    ok = not good and edited and not csv and csv_edit
    print("self-test", "passed" if ok else f"FAILED: {good} {edited} {cut} {csv} {csv_edit}")
    return 0 if ok else 1


# Generated documents whose every line a test compares with the program's output, so that no
# number in them can drift and none needs a mark: docs/reference.md is `hopsim schema
# --markdown` byte for byte (ctest cli.schema-docs).
GENERATED = ("docs/reference.md",)


def list_unmarked(files, source):
    """Prints each block with numbers but no marks, and the counts; exit 0. Skips GENERATED."""
    blocks, numbers = 0, 0
    for path in files:
        if os.path.relpath(path, source).replace(os.sep, "/") in GENERATED:
            continue
        with open(path, encoding="utf-8") as f:
            left = docs_values.unmarked(f.read())
        for line, found in left:
            print(f"{os.path.relpath(path, source)}:{line}: {len(found)}: {' '.join(found)}")
        blocks += len(left)
        numbers += sum(len(found) for _, found in left)
    print(f"{numbers} number(s) in {blocks} block(s) not marked")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--source-dir")
    parser.add_argument("--bin")
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("--update-images", action="store_true",
                        help="redraw each marked image from what its sweep gives now")
    parser.add_argument("--unmarked", action="store_true",
                        help="list the numbers of prose and tables that no mark ties down")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.self_test:
        code = self_test()
        if args.source_dir and args.bin and not self_test_file(os.path.abspath(args.source_dir),
                                                               os.path.abspath(args.bin)):
            code = 1
        return code
    if not args.source_dir or (not args.bin and not args.unmarked):
        parser.error("--source-dir and --bin are needed")
    source = os.path.abspath(args.source_dir)
    files = args.files or [os.path.join(source, "README.md")] + sorted(
        glob.glob(os.path.join(source, "docs", "*.md")))
    if args.unmarked:
        return list_unmarked(files, source)
    problems, ran, marked = [], 0, 0
    for path in files:
        p, n, m = check_file(os.path.abspath(path), source, os.path.abspath(args.bin),
                             update_images=args.update_images)
        problems += p
        ran += n
        marked += m
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{ran} documented command(s) in {len(files)} file(s), {marked} marked number(s); "
          f"{len(problems)} mismatch(es)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
