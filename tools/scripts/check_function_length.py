#!/usr/bin/env python3
"""Checks that no function in the given folders is longer than a limit (default 60 lines,
from the first line of its signature to its closing brace, lambdas inside it included).
Functions are found as clang-format writes them: a definition's opening brace ends its
signature's last line, and its closing brace is alone on a line at the signature's indentation.
Prints each long function; exits 1 if there is one.

Usage: check_function_length.py [--limit N] ROOT FOLDER... | --self-test
"""
import os
import re
import sys
import tempfile

OPEN = re.compile(r"^(\s*)(?!(if|for|while|switch|else|do|catch|try|namespace|struct|class|"
                  r"enum|union|extern|return)\b)[^;]*\)\s*(const)?\s*(noexcept)?\s*(override)?\s*"
                  r"(->\s*[\w:<>,\s*&]+)?\s*\{$")
LAMBDA = re.compile(r"\]\s*(\(|mutable|\{)|\]\s*\(.*\)\s*(mutable\s*)?(->.*)?\{$")
START_STOP = (";", "{", "}", "*/", ":")


def functions(lines):
    """(first line number, line count, signature) of each function in `lines`."""
    out = []
    i = 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        if not m or lines[i].lstrip().startswith(("//", "#", "[", "=")) or \
                LAMBDA.search(lines[i]):
            i += 1
            continue
        first = i
        while first > 0:
            prev = lines[first - 1].rstrip()
            stripped = prev.strip()
            if (not stripped or stripped.startswith(("//", "#", "template")) or
                    prev.endswith(START_STOP)):
                break
            first -= 1
        indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != indent + "}" and \
                not lines[end].rstrip().startswith(indent + "};"):
            end += 1
        out.append((first + 1, end - first + 1, lines[first].strip()))
        i = end + 1
    return out


def scan(root, folders, limit):
    long_ones = []
    for folder in folders:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp", ".cu", ".cuh")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    lines = f.read().split("\n")
                rel = os.path.relpath(path, root)
                for line, count, signature in functions(lines):
                    if count > limit:
                        long_ones.append((rel, line, count, signature))
    return long_ones


def self_test():
    """A 61-line function is found, a 60-line one and a long lambda's caller split in two
    are not."""
    body = "\n".join(f"  int x{i} = {i};" for i in range(58))
    text = ("namespace a {\n\nint long_one(int y,\n             int z) {\n" + body +
            "\n  return 0;\n}\n\nint short_one() {\n" + "\n".join(body.split("\n")[:57]) +
            "\n  return 1;\n}\n\n}  // namespace a\n")
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "w"))
        with open(os.path.join(tmp, "w", "f.cpp"), "w", encoding="utf-8") as f:
            f.write(text)
        found = scan(tmp, ["w"], 60)
    names = [s for _, _, _, s in found]
    print(f"self-test: found {found}")
    return 0 if names == ["int long_one(int y,"] else 1


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return self_test()
    limit = 60
    if args[:1] == ["--limit"]:
        limit = int(args[1])
        args = args[2:]
    root, folders = args[0], args[1:]
    long_ones = scan(root, folders, limit)
    for rel, line, count, signature in long_ones:
        print(f"{rel}:{line}: {count} lines (over {limit}): {signature}")
    print(f"{len(long_ones)} functions over {limit} lines in {', '.join(folders)}")
    return 1 if long_ones else 0


if __name__ == "__main__":
    sys.exit(main())
