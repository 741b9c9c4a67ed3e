#!/usr/bin/env python3
"""The harness's layering (ctest harness.layering.includes).

harness/core/ is one folder per subsystem; each folder's README.md says,
on a line of its own, which folders its files may include:

    May include: util, statistics

(`May include: nothing` for none; a folder always includes itself). The
verbs (harness/verbs/) may include every core folder; no core file may
include a verb's header. This script reads every `#include "..."` of
harness/core/*/ and harness/verbs/, resolves it by file name (every folder
is an include directory, so names are unique across them; an include no
harness folder holds, such as libmapp's mapp_*.h, is below them all) and
fails on:

  - a file directly in core/, a folder without its README or rule, a rule
    naming a folder that does not exist, rules that form a circle;
  - one header name in two folders (the include would be ambiguous);
  - an include its folder's rule does not allow (a core file including a
    verb's header, a lower subsystem including a higher one);
  - a circle of folders in the includes themselves, or a circle of modules
    (x.c with x.h) that spans two folders.

  layering.py [HARNESS_DIR]   check the tree (default: this file's ../../)
  layering.py --self-test     also plant an upward include, a verb include
                              and a circle in a copy, and require failures
"""
import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
RULE = re.compile(r'^May include:\s*(.*?)\s*$', re.M)
VERBS = "verbs"


def read_tree(harness):
    """files: {relative path: folder}, rules: {folder: set}, problems."""
    core = os.path.join(harness, "core")
    problems, files, rules = [], {}, {}
    for name in sorted(os.listdir(core)):
        path = os.path.join(core, name)
        if not os.path.isdir(path):
            problems.append("core/%s: a file directly in core/ (each belongs to a subsystem folder)" % name)
            continue
        readme = os.path.join(path, "README.md")
        match = RULE.search(open(readme).read()) if os.path.exists(readme) else None
        if not match:
            problems.append("core/%s: no README.md with a 'May include:' line" % name)
            rules[name] = set()
        else:
            text = match.group(1).strip().rstrip(".")
            rules[name] = set() if text in ("", "nothing") else {w.strip(" `") for w in text.split(",")}
        for f in sorted(os.listdir(path)):
            if f.endswith((".c", ".h")):
                files["core/%s/%s" % (name, f)] = name
    for f in sorted(os.listdir(os.path.join(harness, VERBS))):
        if f.endswith((".c", ".h")):
            files["%s/%s" % (VERBS, f)] = VERBS
    rules[VERBS] = set(rules) - {VERBS}
    for folder, allowed in sorted(rules.items()):
        for other in sorted(allowed - set(rules)):
            problems.append("core/%s/README.md: may include '%s', which is no folder" % (folder, other))
        rules[folder] = (allowed & set(rules)) | {folder}
    return files, rules, problems


def find_cycle(graph):
    """A circle in {node: set(nodes)} as a list of nodes, or None."""
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt == node:
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def check(harness):
    files, rules, problems = read_tree(harness)
    cycle = find_cycle(rules)
    if cycle:
        problems.append("the rules form a circle: " + " -> ".join(cycle))
    by_name = {}
    for path, folder in files.items():
        by_name.setdefault(os.path.basename(path), []).append(path)
    for name, paths in sorted(by_name.items()):
        if name.endswith(".h") and len(paths) > 1:
            problems.append("%s is in more than one folder: %s" % (name, ", ".join(paths)))
    folders, modules, module_folder = {}, {}, {}
    for path, folder in sorted(files.items()):
        module = os.path.splitext(path)[0]
        module_folder[module] = folder
        modules.setdefault(module, set())
        text = open(os.path.join(harness, path), errors="replace").read()
        for line_no, name in ((text.count("\n", 0, m.start()) + 1, m.group(1)) for m in INCLUDE.finditer(text)):
            targets = [p for p in by_name.get(os.path.basename(name), ()) if p.endswith(".h")]
            if not targets:
                continue  # libmapp's headers, generated ones, system headers written with quotes
            target = targets[0]
            other = files[target]
            if other not in rules[folder]:
                what = "a verb's header" if other == VERBS else "%s/ (above %s/ or beside it)" % (other, folder)
                problems.append("%s:%d includes %s, from %s; %s/ may include %s" %
                                (path, line_no, name, what, folder, ", ".join(sorted(rules[folder] - {folder}))
                                 or "nothing"))
            if other != folder:
                folders.setdefault(folder, set()).add(other)
            tmod = os.path.splitext(target)[0]
            if tmod != module:
                modules[module].add(tmod)
    cycle = find_cycle(folders)
    if cycle:
        problems.append("the folders' includes form a circle: " + " -> ".join(cycle))
    # a module (x.c and x.h together) depends on what either includes
    merged = {}
    for module, deps in modules.items():
        merged.setdefault(module, set()).update(deps)
    crossing = {m: {d for d in deps if d in merged} for m, deps in merged.items()}
    for component in strongly_connected(crossing):
        spanned = {module_folder[m] for m in component}
        if len(spanned) > 1:
            problems.append("modules in a circle across folders %s: %s" %
                            (", ".join(sorted(spanned)), ", ".join(sorted(component))))
    return files, problems


def strongly_connected(graph):
    """Tarjan's components of more than one node."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def report(harness, label):
    files, problems = check(harness)
    for p in problems:
        print("%s: %s" % (label, p))
    return files, problems


def self_test(harness):
    """Plants in a copy: each must be caught."""
    plants = [
        ("core/util/strv.c", '#include "stats.h"\n', "util/ including statistics/", None),
        ("core/history/historydb.c", '#include "report_internal.h"\n', "a core file including a verb's header", None),
        ("core/statistics/stats.c", '#include "spec.h"\n', "statistics/ including specs/", "circle"),
    ]
    ok = True
    for path, line, what, also in plants:
        with tempfile.TemporaryDirectory() as tmp:
            for sub in ("core", VERBS):
                shutil.copytree(os.path.join(harness, sub), os.path.join(tmp, sub))
            with open(os.path.join(tmp, path), "a") as f:
                f.write(line)
            _, problems = check(tmp)
            caught = [p for p in problems if p.startswith(path)]
            if also:  # the planted include closes a circle, which is said too
                caught = caught and [p for p in problems if also in p] and caught
            print("plant (%s: %s): %s" % (path, what, "caught: " + "; ".join(
                p for p in problems if p.startswith(path) or (also and also in p)) if caught else "NOT CAUGHT"))
            ok = ok and bool(caught)
    return ok


def main(argv):
    args = [a for a in argv[1:] if a != "--self-test"]
    harness = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), "..", ".."))
    files, problems = report(harness, "layering")
    ok = not problems
    if ok:
        print("layering: %d files of core/ and verbs/ include only what their folders may" % len(files))
    if "--self-test" in argv[1:]:
        ok = self_test(harness) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
