#!/usr/bin/env python3
"""Checks the project's Markdown pages: links, anchors, runnable commands, size.

    ci/check-links.py [--root DIR] [--max-readme-bytes N] [--max-app-readme-bytes N]
                      [--max-harness-readme-bytes N] [--no-self-test] [PAGE...]

Pages (default): README.md, docs/**/*.md, harness/**/README.md and
miniapps/*/README.md. For each page:

- every relative link and image (`[t](path)`, `![a](path)`, `[r]: path`,
  `<a href>`, `<img src>`) outside code resolves to a file or folder of the
  repository (never above its root);
- a `#anchor` (alone: into the page itself; `page.md#anchor`: into that
  page) names a heading of the target as GitHub spells its anchors
  (lowercased, punctuation dropped, spaces as `-`, repeats `-1`, `-2`, ...)
  or an `<a name>`/`id` there;
- a fenced code block preceded by the line `<!-- runnable -->` holds
  commands meant to be run as shown: each command's first word (after any
  `VAR=value`) is a script or program of the repository or a program the
  build makes (`build*/bin/NAME`, NAME an executable the CMake files
  declare), and every argument that names a path under one of the
  repository's top folders exists. The commands are not run.

Every YAML file a page links to (`.yml`, `.yaml`) and every one under
docs/ (the CI jobs shown there) must parse as YAML (PyYAML, Debian's
python3-yaml; without it each such file is a problem).

Sizes: README.md at most --max-readme-bytes (12500) bytes, every
miniapps/*/README.md at most --max-app-readme-bytes (20000: what the app
is, how to run it, its current figures and its files; dated measurements
go to docs/<app>-performance.md) and harness/README.md at most
--max-harness-readme-bytes (12000: the code map; the user's manual is in
docs/). Each page too large is one line naming it, its size and the limit.

Before the pages, the checker checks itself on a planted tree (a broken
link, a broken anchor, a runnable command that does not exist, a README,
an app's README or harness/README.md too large, a linked YAML file and one
under docs/ that do not parse) and fails if it misses any (--no-self-test
skips this).

Exit status: 0 all good, 1 a problem (one line each, FILE:LINE: what), 2
bad usage.
"""
import argparse
import os
import re
import shlex
import sys
import tempfile
import urllib.parse

RUNNABLE_MARK = "<!-- runnable -->"
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
INLINE_LINK = re.compile(r"\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"<(?:a|img|source)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HTML_ANCHOR = re.compile(r"<[a-z][^>]*?\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
SKIP_DIRS = {".git", "results", "node_modules"}
YAML_SUFFIXES = (".yml", ".yaml")


def default_pages(root):
    pages = []
    if os.path.isfile(os.path.join(root, "README.md")):
        pages.append("README.md")
    for top, pattern in (("docs", None), ("harness", "README.md")):
        base = os.path.join(root, top)
        for d, dirs, files in os.walk(base):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
            for f in sorted(files):
                if f.endswith(".md") and (pattern is None or f == pattern):
                    pages.append(os.path.relpath(os.path.join(d, f), root))
    mini = os.path.join(root, "miniapps")
    if os.path.isdir(mini):
        for app in sorted(os.listdir(mini)):
            if os.path.isfile(os.path.join(mini, app, "README.md")):
                pages.append(os.path.join("miniapps", app, "README.md"))
    return pages


def strip_code_spans(line):
    """Replaces inline code spans by spaces of the same length."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "`":
            j = i
            while j < len(line) and line[j] == "`":
                j += 1
            ticks = line[i:j]
            k = line.find(ticks, j)
            while k != -1 and k + len(ticks) < len(line) and line[k + len(ticks)] == "`":
                k = line.find(ticks, k + len(ticks) + 1)
            if k == -1:
                out.append(line[i:j])
                i = j
                continue
            out.append(" " * (k + len(ticks) - i))
            i = k + len(ticks)
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


class Page:
    """A Markdown page split into prose lines (code removed) and code blocks."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.lines = f.read().split("\n")
        self.prose = []        # (lineno, text) outside fenced code
        self.blocks = []       # (lineno, info, lines, runnable)
        fence = None
        block = None
        prev_text = ""
        for n, line in enumerate(self.lines, 1):
            m = FENCE.match(line)
            if fence is None:
                if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                    fence = m.group(1)
                    block = (n, m.group(2).strip(), [], prev_text.strip() == RUNNABLE_MARK)
                    continue
                self.prose.append((n, line))
                if line.strip():
                    prev_text = line
            else:
                if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                    self.blocks.append(block)
                    fence = None
                    prev_text = line
                    continue
                block[2].append((n, line))
        if fence is not None:
            self.blocks.append(block)

    def anchors(self):
        """GitHub's anchors of the page's headings, and its HTML names and ids."""
        seen = {}
        out = set()
        prev = None
        for n, line in self.prose:
            text = None
            m = ATX.match(line)
            if m:
                text = re.sub(r"[ \t]+#+[ \t]*$", "", m.group(2) or "")
                text = re.sub(r"^#+$", "", text)
            else:
                s = SETEXT.match(line)
                if s and prev is not None and prev[0] == n - 1 and prev[1].strip() \
                        and not ATX.match(prev[1]) and not prev[1].lstrip().startswith(("|", "-", "*", ">")):
                    text = prev[1].strip()
            if text is not None:
                slug = github_slug(text)
                if slug in seen:
                    seen[slug] += 1
                    out.add("%s-%d" % (slug, seen[slug]))
                else:
                    seen[slug] = 0
                    out.add(slug)
            for a in HTML_ANCHOR.findall(line):
                out.add(a)
            prev = (n, line)
        return out


def github_slug(text):
    # Rendered text: code spans keep their content, links and images their text.
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    t = re.sub(r"<[^>]+>", "", t)
    t = t.replace("`", "")
    t = t.strip().lower()
    t = "".join(c for c in t if c.isalnum() or c in "-_ ")
    return t.replace(" ", "-")


def link_targets(page):
    """(lineno, target) of every link and image outside code."""
    out = []
    for n, line in page.prose:
        if line.lstrip().startswith("<!--"):
            continue
        text = strip_code_spans(line)
        for m in INLINE_LINK.finditer(text):
            out.append((n, m.group(1).strip("<>")))
        m = REF_DEF.match(text)
        if m:
            out.append((n, m.group(1).strip("<>")))
        for t in HTML_ATTR.findall(text):
            out.append((n, t))
    return out


def cmake_executables(root):
    names = set()
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not (rel == "." and x.startswith("build"))]
        for f in files:
            if f == "CMakeLists.txt" or f.endswith(".cmake"):
                try:
                    with open(os.path.join(d, f), encoding="utf-8") as fh:
                        text = fh.read()
                except OSError:
                    continue
                names.update(re.findall(r"add_executable\(\s*([A-Za-z0-9_.+-]+)", text))
                names.update(re.findall(r"OUTPUT_NAME\s+([A-Za-z0-9_.+-]+)", text))
    return names


def split_commands(block_lines):
    """The block's commands: continuations joined, comments dropped, split at && || ; |."""
    joined, cur, start = [], "", None
    for n, line in block_lines:
        if start is None:
            start = n
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        joined.append((start, cur))
        cur, start = "", None
    if cur:
        joined.append((start, cur))
    out = []
    for n, line in joined:
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not line:
            continue
        for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
            if part.strip():
                out.append((n, part.strip()))
    return out


# The virtual environments project scripts make (default: ci/NAME.sh for build/NAME).
VENV_MAKERS = {"peers-venv": "peer-venv.sh"}


def check_command(root, execs, tops, n, cmd):
    try:
        words = shlex.split(cmd)
    except ValueError as e:
        return ["%d: cannot read the command %r (%s)" % (n, cmd, e)]
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)
    if not words:
        return []
    problems = []
    first = words[0]
    m = re.match(r"^(?:\./)?(build[A-Za-z0-9_-]*)/bin/([A-Za-z0-9_.+-]+)$", first)
    venv = re.match(r"^(?:\./)?build[A-Za-z0-9_-]*/([a-z0-9-]+-venv)/bin/[A-Za-z0-9_.+-]+$", first)
    if venv:
        # a virtual environment a project script makes (ci/NAME.sh): the
        # script must exist, the venv need not (a plain build has none yet)
        maker = os.path.join("ci", VENV_MAKERS.get(venv.group(1), venv.group(1) + ".sh"))
        if not os.path.isfile(os.path.join(root, maker)):
            problems.append("%d: %s: no %s makes this virtual environment" % (n, first, maker))
    elif m:
        if m.group(2) not in execs:
            problems.append("%d: %s: the build makes no %s (no CMake executable of that name)"
                            % (n, first, m.group(2)))
    elif "/" in first:
        p = os.path.normpath(os.path.join(root, first))
        if not os.path.isfile(p):
            problems.append("%d: %s: no such script or program in the repository" % (n, first))
        elif not os.access(p, os.X_OK) and not first.endswith((".sh", ".py")):
            problems.append("%d: %s: not executable" % (n, first))
    else:
        problems.append("%d: %s: a runnable command starts with a path of the repository "
                        "or build*/bin/ (this checker runs nothing)" % (n, first))
    for w in words[1:]:
        for v in (w, w.split("=", 1)[1] if "=" in w else None):
            if not v or "/" not in v or any(c in v for c in "*?[$"):
                continue
            top = v.split("/", 1)[0]
            if top in tops and not os.path.exists(os.path.join(root, v)):
                problems.append("%d: %s: no such file in the repository" % (n, v))
    return problems


def yaml_files(root, linked):
    """The YAML files to parse: those linked (relative paths) and every one under docs/."""
    found = set(linked)
    for d, dirs, files in os.walk(os.path.join(root, "docs")):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        found.update(os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(YAML_SUFFIXES))
    return sorted(found)


def check_yaml(root, rel):
    """One problem line when the file does not parse as YAML (every document of it)."""
    try:
        import yaml
    except ImportError:
        return ["%s: cannot be parsed: PyYAML is not installed (Debian: python3-yaml)" % rel]
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            list(yaml.safe_load_all(f))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        what = " ".join(str(getattr(e, "problem", None) or e).split())
        return ["%s:%d: not YAML: %s" % (rel, mark.line + 1 if mark else 0, what)]
    except (OSError, UnicodeDecodeError) as e:
        return ["%s: cannot be read: %s" % (rel, e)]
    return []


def size_limits(root, max_readme, max_app_readme, max_harness_readme):
    """(page, limit) of every page with a size limit that exists under root."""
    out = [("README.md", max_readme), (os.path.join("harness", "README.md"), max_harness_readme)]
    mini = os.path.join(root, "miniapps")
    if os.path.isdir(mini):
        for app in sorted(os.listdir(mini)):
            out.append((os.path.join("miniapps", app, "README.md"), max_app_readme))
    return [(rel, limit) for rel, limit in out if limit > 0 and os.path.isfile(os.path.join(root, rel))]


def check(root, pages, max_readme, yaml_checked=None, max_app_readme=20000, max_harness_readme=12000):
    root = os.path.abspath(root)
    problems = []
    cache = {}

    def load(rel):
        if rel not in cache:
            cache[rel] = Page(os.path.join(root, rel))
        return cache[rel]

    execs = cmake_executables(root)
    tops = {d for d in os.listdir(root)
            if os.path.isdir(os.path.join(root, d)) and not d.startswith((".", "build")) and d != "results"}
    linked_yaml = set()
    for rel in pages:
        if not os.path.isfile(os.path.join(root, rel)):
            problems.append("%s: no such page" % rel)
            continue
        page = load(rel)
        here = os.path.dirname(rel)
        for n, target in link_targets(page):
            if SCHEME.match(target):
                continue
            path, _, anchor = target.partition("#")
            path = urllib.parse.unquote(path)
            if path:
                dest = os.path.normpath(os.path.join(here, path))
                if dest == ".." or dest.startswith("../") or os.path.isabs(path):
                    problems.append("%s:%d: %s: leaves the repository" % (rel, n, target))
                    continue
                if not os.path.exists(os.path.join(root, dest)):
                    problems.append("%s:%d: %s: no such file (%s)" % (rel, n, target, dest))
                    continue
                if dest.endswith(YAML_SUFFIXES) and os.path.isfile(os.path.join(root, dest)):
                    linked_yaml.add(dest)
            else:
                dest = rel
            if anchor and dest.endswith(".md") and os.path.isfile(os.path.join(root, dest)):
                if urllib.parse.unquote(anchor) not in load(dest).anchors():
                    problems.append("%s:%d: %s: %s has no heading with the anchor #%s"
                                    % (rel, n, target, dest, anchor))
        for start, info, lines, runnable in page.blocks:
            if not runnable:
                continue
            if not lines:
                problems.append("%s:%d: an empty runnable block" % (rel, start))
            for n, cmd in split_commands(lines):
                for p in check_command(root, execs, tops, n, cmd):
                    problems.append("%s:%s" % (rel, p))
    parsed = yaml_files(root, linked_yaml)
    for rel in parsed:
        problems += check_yaml(root, rel)
    if yaml_checked is not None:
        yaml_checked.extend(parsed)
    for rel, limit in size_limits(root, max_readme, max_app_readme, max_harness_readme):
        size = os.path.getsize(os.path.join(root, rel))
        if size > limit:
            problems.append("%s: %d bytes, more than %d: move the detail into docs/" % (rel, size, limit))
    return problems


def self_test():
    """Plants each kind of problem in a small tree; every one must be found."""
    good_readme = ("# T\n\n## Two words: `x`\n\nSee [a](docs/a.md#the-page), [b](#two-words-x),\n"
                   "![f](docs/f.png) and `[not](a link)`.\n\n" + RUNNABLE_MARK +
                   "\n```sh\nci/go.sh --spec harness/s.yaml   # a comment\n"
                   "X=1 build/bin/mapp-x --list && build/bin/mapp-x \\\n  --y\n```\n")
    plants = {
        "a broken link": ("README.md", "[gone](docs/gone.md)\n", "docs/gone.md: no such file"),
        "a broken anchor": ("README.md", "[gone](docs/a.md#no-such)\n", "no heading with the anchor #no-such"),
        "a broken local anchor": ("docs/a.md", "[up](#nowhere)\n", "#nowhere"),
        "a link above the root": ("docs/a.md", "[up](../../x.md)\n", "leaves the repository"),
        "a missing script": ("README.md", RUNNABLE_MARK + "\n```sh\nci/gone.sh\n```\n", "ci/gone.sh: no such script"),
        "a program the build does not make": ("README.md", RUNNABLE_MARK + "\n```\nbuild/bin/mapp-gone\n```\n",
                                              "the build makes no mapp-gone"),
        "a missing argument path": ("README.md", RUNNABLE_MARK + "\n```\nci/go.sh harness/gone.yaml\n```\n",
                                    "harness/gone.yaml: no such file"),
        "a README too large": ("README.md", "x" * 300 + "\n", "more than"),
        "an app's README too large": ("miniapps/x/README.md", "x" * 300 + "\n", "miniapps/x/README.md: "),
        "harness/README.md too large": ("harness/README.md", "x" * 300 + "\n", "harness/README.md: "),
        "a venv no script makes": ("README.md", RUNNABLE_MARK + "\n```\nbuild/gone-venv/bin/python x.py\n```\n",
                                   "no ci/gone-venv.sh makes"),
        "a linked YAML file that does not parse": ("README.md", "[job](harness/job.yml)\n",
                                                   "harness/job.yml:3: not YAML"),
        "a YAML file under docs/ that does not parse": ("docs/a.md", "", "docs/ci/gitlab.yaml:1: not YAML"),
    }
    broken_yaml = {"harness/job.yml": "job:\n  script:\n    - run: it: now\n",
                   "docs/ci/gitlab.yaml": "job: script: x\n"}
    failures = []
    for what, (page, text, expect) in sorted(plants.items()):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "docs"))
            os.makedirs(os.path.join(d, "ci"))
            os.makedirs(os.path.join(d, "harness"))
            os.makedirs(os.path.join(d, "miniapps", "x"))
            files = {"README.md": good_readme, "docs/a.md": "# The page\n\nBack: [r](../README.md#t).\n",
                     "docs/f.png": "", "harness/s.yaml": "",
                     "CMakeLists.txt": "add_executable(mapp-x main.c)\n",
                     "harness/README.md": "# H\n", "miniapps/x/README.md": "# X\n"}
            for name, body in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(body)
            with open(os.path.join(d, "ci/go.sh"), "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(os.path.join(d, "ci/go.sh"), 0o755)
            limit = len(good_readme) + 200
            clean = check(d, ["README.md", "docs/a.md"], limit, None, 200, 200)
            if clean:
                failures.append("self-test: the clean tree has problems: %s" % "; ".join(clean))
                break
            with open(os.path.join(d, page), "a") as f:
                f.write("\n" + text)
            for name, body in broken_yaml.items():
                if name in expect or name in text:
                    os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
                    with open(os.path.join(d, name), "w") as f:
                        f.write(body)
            found = check(d, ["README.md", "docs/a.md"], limit, None, 200, 200)
            if not any(expect in p for p in found):
                failures.append("self-test: %s was not found (got: %s)" % (what, "; ".join(found) or "nothing"))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--max-readme-bytes", type=int, default=12500)
    ap.add_argument("--max-app-readme-bytes", type=int, default=20000)
    ap.add_argument("--max-harness-readme-bytes", type=int, default=12000)
    ap.add_argument("--no-self-test", action="store_true")
    ap.add_argument("pages", nargs="*")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if not os.path.isdir(root):
        print("check-links: no such folder %s" % root, file=sys.stderr)
        return 2
    problems = [] if args.no_self_test else self_test()
    pages = args.pages or default_pages(root)
    parsed = []
    problems += check(root, pages, args.max_readme_bytes, parsed,
                      args.max_app_readme_bytes, args.max_harness_readme_bytes)
    for p in problems:
        print(p)
    if problems:
        print("check-links: %d problem(s) in %d page(s)" % (len(problems), len(pages)))
        return 1
    sizes = size_limits(root, args.max_readme_bytes, args.max_app_readme_bytes, args.max_harness_readme_bytes)
    print("check-links: %d pages, every link, anchor and runnable command resolves; %d YAML files parse; "
          "%d pages within their size limits (%s)"
          % (len(pages), len(parsed), len(sizes),
             ", ".join("%s %d/%d" % (rel, os.path.getsize(os.path.join(root, rel)), limit) for rel, limit in sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
