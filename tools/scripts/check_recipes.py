#!/usr/bin/env python3
"""Checks docs/architecture.md's recipes against the code, so that they cannot drift.

Each recipe ("### Adding a workload kind", "... a config key", "... a subcommand", "... a
collective algorithm", "... an EP library", "... a CP algorithm", "... a pipeline schedule",
"... a GPU type") names the files it touches in backquotes (`<kind>` and the like stand for any
name). This fails when:
- a named file does not exist;
- a source file is a registry of the family and the recipe does not name it: for kinds, a
  file that names two thirds of the kinds' types (read from the Job variant); for config keys,
  a file that declares a key (an IntegerKey, ChoiceKey, ...) or checks a section's keys
  (allow_only), so that keys are declared and read only where the recipe says; for
  subcommands, a file that names two thirds of the subcommands' declarations (the list in
  hopsim_main.cpp) or adds a subcommand to CLI11 (add_subcommand); for
  algorithms, one that names three or more CollectiveAlgorithm enumerators; for EP exchange
  and CP algorithms, one that names every enumerator of EpAlgorithm (CpAlgorithm) or holds
  every row's name of its table as a string literal ("flat", "two_tier", ...); for pipeline
  schedules, a file that defines a schedule row (a ScheduleRow) or holds every schedule's name
  as a string literal; for GPU types,
  any source file holding a GPU model's name as a string literal (a GPU is data); for sources of
  GPU speed ("... a source of GPU speed"), a file that reads a perturbation's compute_speed or
  kernel_draw, so that speeds are combined only where the recipe says (ComputeSpeeds).
Prints what is wrong; exits 1 if anything is.

Usage: check_recipes.py [SOURCE_DIR] | --self-test
"""
import fnmatch
import os
import re
import shutil
import sys
import tempfile

DOC = "docs/architecture.md"
SOURCES = ("sim", "topology", "workloads", "tools")
RECIPES = {"kind": "### Adding a workload kind",
           "key": "### Adding a config key",
           "command": "### Adding a subcommand",
           "algorithm": "### Adding a collective algorithm",
           "ep": "### Adding an EP library",
           "cp": "### Adding a CP algorithm",
           "schedule": "### Adding a pipeline schedule",
           "gpu": "### Adding a GPU type",
           "speed": "### Adding a source of GPU speed"}
# The tables of the EP exchanges and the CP algorithms: their enum and the file whose rows
# name them ({Enum::X, "name", ...}).
TABLES = {"ep": ("EpAlgorithm", "workloads/collectives/ep_algorithms.hpp"),
          "cp": ("CpAlgorithm", "workloads/cp/cp_algorithms.hpp")}
PATH = re.compile(r"`([A-Za-z0-9_.<>/-]+/[A-Za-z0-9_.<>/-]*)`")
GPU_LITERAL = re.compile(r'(?<!\\)"(?:NVIDIA )?[ABH]\d{3}\b[^"\\]*"')
KEY_DECLARATION = re.compile(r"\bconstexpr\s+(Integer|Number|Boolean|String|Choice|Value)Key\s+k")
KEY_CHECK = re.compile(r"[.>]allow_only\(")
COMMAND_DECLARATION = re.compile(r"\bCommand\s+(declare_\w+_command)\(")
COMMAND_ADDED = re.compile(r"[.>]add_subcommand\(")
SCHEDULE_ROW = re.compile(r"\bconst\s+ScheduleRow\s+k\w+\s*\{")
SPEED_READ = re.compile(r"\.compute_speed\b|\bkernel_draw\b")


def recipe_paths(doc):
    """Per recipe, the paths its section names (placeholders as globs)."""
    out = {}
    for key, title in RECIPES.items():
        start = doc.find(title)
        if start < 0:
            raise SystemExit(f"{DOC}: no section \"{title}\"")
        end = doc.find("\n#", start + len(title))
        section = doc[start:end if end >= 0 else len(doc)]
        out[key] = sorted({re.sub(r"<[^>]+>", "*", p).split(" ")[0]
                           for p in PATH.findall(section)})
    return out


def sources(root):
    for top in SOURCES:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".cpp", ".hpp")):
                    full = os.path.join(dirpath, name)
                    rel = os.path.relpath(full, root).replace(os.sep, "/")
                    with open(full, encoding="utf-8") as f:
                        yield rel, f.read()


def table_rows(root, enum, path):
    """The enumerators of `enum` and their rows' names, as the table in `path` has them."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        text = f.read()
    body = re.search(rf"enum class {enum}[^{{]*\{{([^}}]*)\}}", text).group(1)
    names = re.findall(rf"\{{{enum}::\w+,\s*\"([^\"]+)\"", text)
    return [e.strip() for e in body.split(",") if e.strip()], names


def names_every_row(code, enum, enumerators, names):
    """Whether `code` names every enumerator of `enum`, or holds every row's name as a literal."""
    if all(re.search(rf"\b{enum}::{e}\b", code) for e in enumerators):
        return True
    return bool(names) and all(f'"{n}"' in code for n in names)


def schedule_names(root):
    """The pipeline schedules' names, as their rows (workloads/step/schedule_*.cpp) give them."""
    names = []
    for dirpath, _, files in os.walk(os.path.join(root, "workloads/step")):
        for name in sorted(files):
            if name.startswith("schedule_") and name.endswith(".cpp"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    m = re.search(r"ScheduleRow\s+k\w+\s*\{\s*\.name\s*=\s*\"([^\"]+)\"", f.read())
                if m:
                    names.append(m.group(1))
    return names


def registries(root):
    """Per family, the source files that enumerate it."""
    with open(os.path.join(root, "workloads/experiment/job.hpp"), encoding="utf-8") as f:
        variant = re.search(r"using Job = std::variant<([^>]*)>", f.read())
    kinds = [k.strip() for k in variant.group(1).split(",")]
    with open(os.path.join(root, "workloads/collectives/algorithms.hpp"), encoding="utf-8") as f:
        enum = re.search(r"enum class CollectiveAlgorithm[^{]*\{([^}]*)\}", f.read())
    algorithms = [a.strip() for a in enum.group(1).split(",") if a.strip()]
    tables = {key: table_rows(root, *table) for key, table in TABLES.items()}
    commands = sorted({m.group(1) for _, text in sources(root)
                       for m in COMMAND_DECLARATION.finditer(text)})
    schedules = schedule_names(root)
    found = {key: [] for key in RECIPES}
    for rel, text in sources(root):
        code = re.sub(r"//[^\n]*", "", text)  # comments may name anything
        for key, (enum, _) in TABLES.items():
            if names_every_row(code, enum, *tables[key]):
                found[key].append(rel)
        if sum(1 for k in kinds if re.search(rf"\b{k}\b", code)) * 3 >= 2 * len(kinds):
            found["kind"].append(rel)
        named = {a for a in algorithms if re.search(rf"\b(CollectiveAlgorithm|Algo)::{a}\b", code)}
        if len(named) >= 3:
            found["algorithm"].append(rel)
        if GPU_LITERAL.search(code):
            found["gpu"].append(rel)
        if KEY_DECLARATION.search(code) or KEY_CHECK.search(code):
            found["key"].append(rel)
        listed = sum(1 for c in commands if re.search(rf"\b{c}\b", code))
        if (commands and listed * 3 >= 2 * len(commands)) or COMMAND_ADDED.search(code):
            found["command"].append(rel)
        if SCHEDULE_ROW.search(code) or (schedules and all(f'"{n}"' in code for n in schedules)):
            found["schedule"].append(rel)
        if SPEED_READ.search(code):
            found["speed"].append(rel)
    return found


def check(root):
    with open(os.path.join(root, DOC), encoding="utf-8") as f:
        named = recipe_paths(f.read())
    bad = []
    for key, paths in named.items():
        for p in paths:
            if "*" not in p and not os.path.exists(os.path.join(root, p.rstrip("/"))):
                bad.append(f"{DOC}: the {key} recipe names {p}, which does not exist")
    for key, files in registries(root).items():
        for rel in files:
            if not any(fnmatch.fnmatch(rel, p) for p in named[key]):
                bad.append(f"{rel}: enumerates every {key} but the {key} recipe in {DOC} does "
                           "not name it")
    return bad, named


def self_test(root):
    """A registry the doc omits, a GPU name in code and a renamed file are each found."""
    cases = {
        "tools/commands/extra_registry.cpp":
            "FlowsJob CollectiveJob AttentionLayerJob MoeLayerJob TransformerLayerJob\n",
        "workloads/compute/gpu_names.cpp": 'const char* kName = "H100 SXM";\n',
        "tools/config/ep_names.cpp": ('std::array k{"flat", "two_tier", "low_latency", '
                                      '"pplx_kernels", "nccl_all_to_all", "hybrid_ep", '
                                      '"uccl_ep", "megatron_alltoall", '
                                      '"megatron_allgather"};\n'),
        "workloads/cp/attention_switch.cpp":
            "CpAlgorithm::Ring CpAlgorithm::RingPassQ CpAlgorithm::AllGather "
            "CpAlgorithm::Ulysses\n",
        "tools/commands/stray_key.cpp": 'inline constexpr IntegerKey kStray{.name = "stray"};\n',
        "tools/stray_cli.cpp": 'void f(CLI::App& app) { app.add_subcommand("x", "y"); }\n',
        "workloads/step/stray_rows.cpp": "const ScheduleRow kStraySchedule{};\n",
        "tools/commands/schedule_list.cpp":
            'const char* k[] = {"1f1b", "interleaved", "zb-h1", "dualpipe", "dualpipev", '
            '"interleaved_ep_overlap", "1f1b_ep_overlap"};\n',
        "workloads/step/stray_speed.cpp":
            "double slow(const topo::Perturbation& p) { return 0.9 * p.compute_speed; }\n",
    }
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for top in SOURCES + ("docs", "tests", "calibrate", "configs"):
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        clean, _ = check(tmp)
        for name, text in cases.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
            bad, _ = check(tmp)
            os.remove(os.path.join(tmp, name))
            hit = any(b.startswith(name) for b in bad)
            print(f"self-test: {name}: {'found' if hit else 'MISSED'}")
            ok = ok and hit
        os.rename(os.path.join(tmp, "workloads/jobs/collective_plan.cpp"),
                  os.path.join(tmp, "workloads/jobs/collective_builder.cpp"))
        bad, _ = check(tmp)
        hit = any("collective_plan.cpp, which does not exist" in b for b in bad)
        print(f"self-test: a renamed file: {'found' if hit else 'MISSED'}")
        ok = ok and hit and not clean
    return 0 if ok else 1


def main():
    if sys.argv[1:2] == ["--self-test"]:
        return self_test(os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "."))
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    bad, named = check(root)
    for b in bad:
        print(b)
    print(f"{DOC}: recipes name {', '.join(f'{len(v)} paths ({k})' for k, v in named.items())}; "
          f"{len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
