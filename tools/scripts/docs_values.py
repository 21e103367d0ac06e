"""The numbers in the prose and tables of README.md and docs/*.md, checked against the commands
that produce them (check_docs.py runs this after each document's transcripts, in the same
scratch folder, so a mark may read a file a transcript wrote).

Marks are HTML comments on their own lines, so they do not show and merge easily:

  <!-- docs-check: cmd NAME COMMAND -->
      NAME is COMMAND's output, run once per document when a mark first needs it: its stdout
      parsed as JSON where it is JSON (`--json --no-wall-time`), else its printed text.
  <!-- docs-check: values
  54.1 = cp8c.layer_time_s * 1e3
  31.5 x2 = cp8.layer_time_s * 1e3
  given 8 128 4096: the experiment's inputs
  cited 430: Meta, "The Llama 3 Herd of Models" (2024), Table 4
  -->
      ties the numbers of the next block (the paragraph or table after the comment, up to a
      blank line) to where they come from. `TEXT = EXPR`: the number as written (sign,
      thousands commas and decimals as in the text; `xN`: it is written N times) equals EXPR
      rounded to the decimals it is written with. EXPR is Python over the NAMEs (JSON objects
      read with `.key` or `["key"]`, lists with `[i]`) and `csv(FILE)` (a CSV's rows, numbers
      as numbers), `row(SWEEP.csv, V1, V2...)` (the sweep's row whose varied keys have those
      values, in the CSV's order), `load(FILE.json)`, `match(TEXT, REGEX)` (the first group
      in a report's message, as a number), `grep(NAME, REGEX)` (the first group of the first printed line that
      matches, as a number), `find(LIST, key=value...)` (the first element whose keys have
      those values). `given`, `cited`, `past` and `measured` claim numbers that no command
      here prints: inputs, published figures (the source named), earlier versions' results,
      wall-clock measurements; `unchecked` claims a number that a run gives but no mark ties
      to its command yet (what is left to do); each takes a reason after a colon.

Every number in a marked block must be claimed, as often as it is written: a number edited by
one digit is then either unclaimed, or its mark's number is no longer written, or its value
differs. Numbers inside `code`, link targets, dates and words (H100, EP64, 8K) are not numbers
here. A number is a run of digits with optional thousands commas and decimals, with its sign
(-, + or the minus sign) where one leads it.
"""

import csv as csv_module
import json
import keyword
import math
import re

MARK = re.compile(r"<!-- docs-check: (cmd|values)\b(.*?)-->", re.S)
NUMBER = re.compile(r"(?<![\w.,−+-])([−+-]?)(\d+(?:,\d{3})*(?:\.\d+)?)(?![\w])")
NOT_NUMBERS = [re.compile(p) for p in (
    r"`[^`]*`", r"\]\([^)]*\)", r"<!--.*?-->", r"https?://\S+", r"\b\d{4}-\d{2}-\d{2}\b",
    r"\b\d+(?:\.\d+)?e-?\d+\b")]
CLAIMS = ("given", "cited", "past", "measured", "unchecked")


class Node:
    """A JSON value read with attributes: `a.key`, `a["key"]`, `a[0]`."""

    def __init__(self, value, where):
        self._value, self._where = value, where

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __getitem__(self, key):
        v = self._value
        try:
            return wrap(v[key], f"{self._where}.{key}" if isinstance(key, str) else
                        f"{self._where}[{key}]")
        except (KeyError, IndexError, TypeError):
            keys = ", ".join(list(v)[:30]) if isinstance(v, dict) else type(v).__name__
            raise KeyError(f"{self._where} has no {key!r} (has: {keys})") from None

    def __len__(self):
        return len(self._value)

    def __iter__(self):
        return (wrap(v, f"{self._where}[{i}]") for i, v in enumerate(self._value))

    def __repr__(self):
        return f"{self._where}={json.dumps(self._value)[:200]}"


def wrap(value, where):
    return Node(value, where) if isinstance(value, (dict, list)) else value


def numeric(text):
    try:
        return float(text) if text != "" else math.nan
    except ValueError:
        return text


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [wrap({k: numeric(v) for k, v in row.items()}, f"{path}[{i}]")
                for i, row in enumerate(csv_module.DictReader(f))]


def sweep_row(rows, values, path):
    """The row of a sweep CSV whose varied keys (the columns between `point` and
    `step_time_s`) have VALUES, in order."""
    if not rows:
        raise KeyError(f"{path} has no rows")
    keys = list(rows[0]._value)
    varied = keys[keys.index("point") + 1:keys.index("step_time_s")]
    for r in rows:
        if all(r[k] == v or str(r[k]) == str(v) for k, v in zip(varied, values)):
            return r
    raise KeyError(f"{path} has no row with {dict(zip(varied, values))}")


def load(path):
    with open(path, encoding="utf-8") as f:
        return wrap(json.load(f), path)


def grep(output, regex):
    for line in output["text"]:
        m = re.search(regex, line)
        if m:
            return numeric(m.group(1).replace(",", ""))
    raise KeyError(f"no printed line of `{output['command']}` matches {regex!r}")


def match(text, regex):
    """The first group of REGEX in TEXT (a report's message), as a number."""
    m = re.search(regex, text)
    if not m:
        raise KeyError(f"{regex!r} not in {text[:120]!r}")
    return numeric(m.group(1).replace(",", ""))


def find(items, **keys):
    for item in items:
        if all(item[k] == v for k, v in keys.items()):
            return item
    raise KeyError(f"no element with {keys}")


class Outputs:
    """The document's commands, each run once when first read."""

    def __init__(self, run, cwd):
        self.run, self.cwd, self.commands, self.cache = run, cwd, {}, {}

    def get(self, name):
        if name not in self.cache:
            command = self.commands[name]
            rc, out, err = self.run(command, self.cwd)
            text = "\n".join(out)
            try:
                value = wrap(json.loads(text), name)
            except ValueError:
                value = None
            self.cache[name] = {"command": command, "rc": rc, "json": value,
                                "text": out + err}
        return self.cache[name]


def numbers_of(block):
    """The numbers written in a block, as written."""
    for pattern in NOT_NUMBERS:
        block = pattern.sub(lambda m: " " * len(m.group(0)), block)
    return [sign + digits for sign, digits in NUMBER.findall(block)]


def parse_marks(body, where):
    """[(kind, number text, count, expression or reason)] of a values comment."""
    marks = []
    for raw in body.split("\n"):
        line = raw.strip()
        if not line:
            continue
        kind = line.split(None, 1)[0]
        if kind in CLAIMS:
            texts, _, reason = line[len(kind):].partition(":")
            if not reason.strip():
                raise ValueError(f"{where}: `{kind}` needs a reason after a colon: {line}")
            for text in texts.split():
                m = re.fullmatch(r"x(\d+)", text)
                if m and marks and marks[-1][0] == kind:
                    marks[-1] = marks[-1][:2] + (marks[-1][2] + int(m.group(1)) - 1,) + \
                        marks[-1][3:]
                else:
                    marks.append((kind, text, 1, reason.strip()))
            continue
        m = re.fullmatch(r"(\S+)(?:\s+x(\d+))?\s*=\s*(.+)", line)
        if not m:
            raise ValueError(f"{where}: a values line is `NUMBER = EXPR` or "
                             f"`{'|'.join(CLAIMS)} NUMBERS: REASON`: {line}")
        marks.append(("value", m.group(1), int(m.group(2) or 1), m.group(3)))
    return marks


def blocks(text):
    """[(line number, marks, block text)] of a document's values comments; the commands."""
    lines = text.split("\n")
    commands, found, pending, i = {}, [], [], 0
    while i < len(lines):
        m = re.match(r"\s*<!-- docs-check: (cmd|values)\b(.*)", lines[i])
        if not m:
            if pending and lines[i].strip():
                j = i
                while j < len(lines) and lines[j].strip() and "<!-- docs-check:" not in lines[j]:
                    j += 1
                found.append((i + 1, pending, "\n".join(lines[i:j])))
                pending, i = [], j
                continue
            i += 1
            continue
        body, j = m.group(2), i
        while "-->" not in body and j + 1 < len(lines):
            j += 1
            body += "\n" + lines[j]
        body = body.split("-->")[0]
        if m.group(1) == "cmd":
            name, _, command = body.strip().partition(" ")
            if not name.isidentifier() or keyword.iskeyword(name) or not command.strip():
                raise ValueError(f"line {i + 1}: `cmd NAME COMMAND` needs a Python name that is "
                                 f"not a keyword, and a command: {body.strip()[:80]}")
            commands[name] = command.strip()
        else:
            pending += parse_marks(body, f"line {i + 1}")
        i = j + 1
    return commands, found


def written_value(text):
    return float(text.replace(",", "").replace("−", "-"))


def formatted(value, text):
    """VALUE as TEXT writes numbers: its decimals, its commas, its sign."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    s = f"{value:.{decimals}f}"
    if float(s) == 0:
        s = s.lstrip("-")
        return (text[0] if text[0] in "+−-" else "") + s
    if "," in text:
        whole, _, frac = s.partition(".")
        sign = "-" if whole.startswith("-") else ""
        s = sign + f"{int(whole.lstrip('-')):,}" + ("." + frac if frac else "")
    if text[0] in "+−" and not s.startswith("-"):
        s = "+" + s
    if text[0] == "−":
        s = s.replace("-", "−")
    return s


def evaluate(expression, outputs):
    """EXPR's value over the document's commands."""
    names = {"csv": lambda path: read_csv(f"{outputs.cwd}/{path}"),
             "row": lambda path, *v: sweep_row(read_csv(f"{outputs.cwd}/{path}"), v, path),
             "load": lambda path: load(f"{outputs.cwd}/{path}"),
             "grep": lambda name, regex: grep(outputs.get(name), regex),
             "match": match, "find": find, "abs": abs, "max": max, "min": min, "sum": sum,
             "len": len}
    for name in outputs.commands:
        if re.search(rf"\b{re.escape(name)}\b", expression):
            out = outputs.get(name)
            names[name] = out["json"] if out["json"] is not None else out
    return eval(expression, {"__builtins__": {}, **names})  # pylint: disable=eval-used


def check_block(marks, block, outputs, values=None):
    """The problems of one marked block. VALUES caches each expression's value."""
    problems = []
    written = {}
    for n in numbers_of(block):
        written[n] = written.get(n, 0) + 1
    claimed = {}
    for kind, text, count, what in marks:
        claimed[text] = claimed.get(text, 0) + count
        if kind != "value":
            continue
        key = what
        try:
            if values is not None and key in values:
                value = values[key]
            else:
                value = evaluate(what, outputs)
                if values is not None:
                    values[key] = value
        except Exception as e:  # pylint: disable=broad-except
            problems.append(f"  {text} = {what}: cannot evaluate: {type(e).__name__}: {e}")
            continue
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            problems.append(f"  {text} = {what}: not a number: {value!r}")
        elif formatted(value, text) != text:
            problems.append(f"  {text} = {what}: the command gives {formatted(value, text)} "
                            f"({value!r})")
    for text in sorted(set(written) | set(claimed)):
        if written.get(text, 0) != claimed.get(text, 0):
            problems.append(f"  {text}: written {written.get(text, 0)} time(s), marked "
                            f"{claimed.get(text, 0)}")
    return problems


def check_text(text, rel, outputs, values=None):
    """The problems of a document's marked blocks, and how many numbers they mark."""
    commands, found = blocks(text)
    outputs.commands = commands
    problems, marked = [], 0
    for line, marks, block in found:
        marked += sum(count for _, _, count, _ in marks)
        p = check_block(marks, block, outputs, values)
        if p:
            problems.append(f"{rel}:{line}: marked numbers differ:\n" + "\n".join(p))
    return problems, marked


def mutations(text):
    """Every number of every marked block edited by one digit: (where, edited document)."""
    _, found = blocks(text)
    lines = text.split("\n")
    for line, _, block in found:
        offset = len("\n".join(lines[:line - 1])) + (1 if line > 1 else 0)
        masked = block
        for pattern in NOT_NUMBERS:
            masked = pattern.sub(lambda m: " " * len(m.group(0)), masked)
        for m in NUMBER.finditer(masked):
            at = offset + m.end() - 1  # the last digit
            digit = text[at]
            edited = text[:at] + str((int(digit) + 1) % 10) + text[at + 1:]
            yield f"line {line}: {m.group(0)} -> {edited[offset + m.start():at + 1]}", edited


def unmarked(text):
    """[(line number, numbers)] of the blocks outside code fences that have numbers and no
    values comment (what is left to mark)."""
    lines = text.split("\n")
    marked = {line for line, _, _ in blocks(text)[1]}
    out, i, fence = [], 0, False
    while i < len(lines):
        if lines[i].startswith("```"):
            fence = not fence
            i += 1
            continue
        if fence or not lines[i].strip() or "<!-- docs-check:" in lines[i]:
            if "<!-- docs-check:" in lines[i]:
                while "-->" not in lines[i] and i + 1 < len(lines):
                    i += 1
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip() and not lines[j].startswith("```") \
                and "<!-- docs-check:" not in lines[j]:
            j += 1
        numbers = numbers_of("\n".join(lines[i:j]))
        if numbers and i + 1 not in marked:
            out.append((i + 1, numbers))
        i = j
    return out


IMAGE = re.compile(r"<!-- docs-check: image (\S+) (\S+)\s*-->")


def png_text(path, key):
    """The text chunk KEY of a PNG file, or None."""
    with open(path, "rb") as f:
        data = f.read()
    at = 8
    while at + 8 <= len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"tEXt":
            name, _, value = body.partition(b"\0")
            if name.decode("latin-1") == key:
                return value.decode("latin-1")
        elif kind == b"iTXt":
            name, _, rest = body.partition(b"\0")
            if name.decode("latin-1") == key and rest[0] == 0:
                return rest[2:].split(b"\0", 2)[2].decode("utf-8")
    return None


def plot_module(source_dir):
    import importlib.util  # pylint: disable=import-outside-toplevel
    spec = importlib.util.spec_from_file_location("plot_sweep",
                                                  f"{source_dir}/tools/plot_sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def same(a, b):
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)):
        return (a is None or math.isnan(a)) and (b is None or math.isnan(b))
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-12)


def check_images(text, rel, cwd, source_dir, update=False):
    """The problems of a document's image marks: `<!-- docs-check: image PNG SWEEP.csv -->`
    says PNG (under the source tree) is plot_sweep.py's breakdown.png of SWEEP.csv (in the
    scratch folder, written by a transcript); the numbers it plots, kept in its `hopsim-data`
    text chunk, must be the CSV's now. UPDATE redraws the PNG from the CSV instead."""
    problems = []
    for m in IMAGE.finditer(text):
        png, sweep_csv = f"{source_dir}/{m.group(1)}", f"{cwd}/{m.group(2)}"
        plot = plot_module(source_dir)
        try:
            labels, compute, exposed, step = plot.breakdown_data(plot.Sweep(sweep_csv))
        except plot.SweepError as e:
            problems.append(f"{rel}: image {m.group(1)}: {e}")
            continue
        if update:
            problems += redraw(source_dir, sweep_csv, png)
            continue
        try:
            stored = json.loads(png_text(png, "hopsim-data") or "null")
        except OSError as e:
            stored, problems = None, problems + [f"{rel}: {m.group(1)}: {e.strerror}"]
        if not stored:
            problems.append(f"{rel}: image {m.group(1)} has no hopsim-data text chunk: redraw "
                            f"it (check_docs.py --update-images)")
            continue
        want = {"labels": labels, "compute_ms": compute, "exposed_ms": exposed, "step_ms": step}
        for key, values in want.items():
            got = stored.get(key, [])
            if len(got) != len(values) or not all(
                    (g == v) if key == "labels" else same(g, v) for g, v in zip(got, values)):
                problems.append(f"{rel}: image {m.group(1)} plots {key} {got}, the sweep gives "
                                f"{values}: redraw it (check_docs.py --update-images)")
    return problems


def redraw(source_dir, sweep_csv, png):
    import shutil  # pylint: disable=import-outside-toplevel
    import subprocess  # pylint: disable=import-outside-toplevel
    import tempfile  # pylint: disable=import-outside-toplevel
    out = tempfile.mkdtemp(prefix="docs-images.")
    p = subprocess.run([f"{source_dir}/tools/plot_sweep.py", sweep_csv, "--out", out],
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        return [f"plot_sweep.py {sweep_csv} failed: {p.stderr.strip()}"]
    shutil.copyfile(f"{out}/breakdown.png", png)
    print(f"redrew {png}")
    return []
