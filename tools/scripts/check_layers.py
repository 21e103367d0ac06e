#!/usr/bin/env python3
"""Checks that #includes go one way: tools -> workloads -> topology -> sim, and inside
workloads from experiment down to compute (docs/architecture.md). calibrate/ stands alone, and
JSON stays in tools/. Prints every include that goes the wrong way; exits 1 if there is one.

Usage: check_layers.py [SOURCE_DIR] | --self-test
"""
import os
import re
import sys
import tempfile

# What each folder may include, by the first path components of the included file.
# Inside workloads/, each folder may include itself and the folders listed before it.
ORDER = ["compute", "plan", "mesh", "model", "collectives", "env", "costs", "cp", "ep", "jobs",
         "trace", "layer", "step", "experiment"]
# Folders that do not need each other stay apart: the mesh and plans know nothing of each other.
APART = {"mesh": {"compute", "plan"}, "plan": set(), "compute": set()}
WORKLOADS = {}
for _i, _name in enumerate(ORDER):
    WORKLOADS[_name] = {"workloads/" + d for d in ORDER[:_i + 1]
                        if d not in APART.get(_name, set())}
WORKLOADS["model"] = {"workloads/mesh", "workloads/model"}
WORKLOADS["collectives"] = {"workloads/compute", "workloads/plan", "workloads/collectives"}
WORKLOADS["experiment"] = {"workloads"}
LOWER = {"sim": {"sim"}, "topology": {"sim", "topology"}}
PROJECT = ("sim/", "topology/", "workloads/", "tools/", "calibrate/")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def allowed(path):
    """The include prefixes a file at `path` (relative to the source tree) may use, or None
    for no limit among project folders."""
    parts = path.split("/")
    top = parts[0]
    if top in LOWER:
        return LOWER[top]
    if top == "workloads":
        sub = parts[1] if len(parts) > 2 else None
        return {"sim", "topology"} | WORKLOADS.get(sub, {"workloads"})
    if top == "calibrate":
        return {"calibrate"}
    if top == "bench":
        return {"sim", "topology", "workloads", "bench"}
    return None  # tools/, tests/: anything below


def matches(include, prefixes):
    return any(include == p or include.startswith(p + "/") for p in prefixes)


def self_test():
    """The checker is not vacuous: three wrong-way includes in a scratch tree are all found."""
    files = {"sim/a.hpp": '#include "workloads/plan/plan.hpp"\n',
             "workloads/plan/b.cpp": '#include "workloads/experiment/job.hpp"\n#include "sim/units.hpp"\n',
             "topology/c.cpp": "#include <nlohmann/json.hpp>\n",
             "tools/d.cpp": '#include "workloads/experiment/job.hpp"\n'}
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, name)), exist_ok=True)
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
        bad, _ = scan(tmp)
    expected = ["sim/a.hpp:1", "topology/c.cpp:1", "workloads/plan/b.cpp:1"]
    found = sorted(b.split(": ")[0] for b in bad)
    print(f"self-test: found {found}, expected {expected}")
    return 0 if found == expected else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    bad, checked = scan(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "."))
    for b in bad:
        print(b)
    print(f"{checked} files, {len(bad)} includes the wrong way")
    return 1 if bad else 0


def scan(root):
    """(wrong-way includes, files checked) under `root`."""
    bad = []
    checked = 0
    for folder in ("sim", "topology", "workloads", "tools", "calibrate", "bench"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if not name.endswith((".hpp", ".cpp", ".cu", ".cuh")):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                limit = allowed(rel)
                checked += 1
                with open(full, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        if inc.startswith("nlohmann/") and not rel.startswith(("tools/",
                                                                                "calibrate/")):
                            bad.append(f"{rel}:{number}: includes {inc}: JSON stays in tools/")
                        if limit is not None and inc.startswith(PROJECT) and \
                                not (matches(inc.rsplit("/", 1)[0], limit) or inc in limit):
                            bad.append(f"{rel}:{number}: includes {inc}, outside "
                                       f"{', '.join(sorted(limit))}")
    return bad, checked


if __name__ == "__main__":
    sys.exit(main())
