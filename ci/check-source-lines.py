#!/usr/bin/env python3
"""Every source file of the project (C, CUDA, C++, Python, shell) is at most
600 lines: a longer file is split by what it holds (its own header or
module), not left to grow. Checks itself first on a planted long file.

usage: ci/check-source-lines.py --root DIR [--max N]"""
import argparse
import os
import sys
import tempfile

EXTENSIONS = (".c", ".h", ".cu", ".cpp", ".py", ".sh")
SKIP = {".git", "results", "__pycache__", "node_modules"}


def long_files(root, limit):
    found = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if x not in SKIP and not (rel == "." and (x.startswith("build") or
                                                                                 x.startswith("."))))
        for f in sorted(files):
            if not f.endswith(EXTENSIONS):
                continue
            path = os.path.join(d, f)
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    n = sum(1 for _ in fh)
            except OSError:
                continue
            if n > limit:
                found.append((os.path.relpath(path, root), n))
    return found


def self_test(limit):
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "src"))
        with open(os.path.join(d, "src", "long.c"), "w") as f:
            f.write("int x;\n" * (limit + 1))
        with open(os.path.join(d, "src", "short.c"), "w") as f:
            f.write("int y;\n" * limit)
        got = long_files(d, limit)
        return got == [("src/long.c", limit + 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--max", type=int, default=600)
    args = ap.parse_args()
    if not self_test(args.max):
        print("check-source-lines: the self-test did not find a planted long file", file=sys.stderr)
        return 1
    found = long_files(args.root, args.max)
    for path, n in found:
        print(f"{path}: {n} lines, more than {args.max}: split it by what it holds")
    if found:
        return 1
    print(f"check-source-lines: every source file is at most {args.max} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
