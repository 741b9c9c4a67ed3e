#!/usr/bin/env python3
"""Every built mini-app is in every place a mini-app must be (ctest
apps.places.checklist; docs/adding-a-mini-app.md lists the same places).

A built app is an executable BIN_DIR/mapp-NAME whose NAME has no '-' (the
rule `mapp list` follows: mapp-heat-bench is a tool). For each, in its
folder miniapps/NAME/ (crm's layout is the model): NAME.h, an *_app.c
(the driver hooks and the headline), a kernel header (*_kernel*.h), one
source a backend, main.c, bench.c, README.md, tests/CMakeLists.txt calling
mapp_add_app_tests(NAME) and tests/bad_input.txt; its --list declares a
headline. Outside its folder: add_subdirectory(miniapps/NAME) in the top
CMakeLists.txt, its options in tests/options/declarations.txt, its tiny
baselines (baselines/NAME/tiny.h5, tiny-weak2.h5, tiny-weak4.h5), a run in
harness/sweeps/quick.yaml, its default in ci/sim-validate.sh, and where
its --list names a cuda backend, its tests in ci/gpu-bundle.sh's bundle
and its answers in ci/gpu-acceptance.sh. The page must name each of these
places, so the list here and the page cannot drift apart.

  check_app_places.py BIN_DIR SOURCE_DIR              check the build's apps
  check_app_places.py BIN_DIR SOURCE_DIR --self-test  also require every
      check to fail for a planted app that is nowhere
"""
import glob
import json
import os
import re
import subprocess
import sys

PAGE = "docs/adding-a-mini-app.md"


def read(src, rel):
    path = os.path.join(src, rel)
    return open(path, encoding="utf-8").read() if os.path.exists(path) else ""


def built_apps(bin_dir):
    names = []
    for path in sorted(glob.glob(os.path.join(bin_dir, "mapp-*"))):
        name = os.path.basename(path)[5:]
        if "-" not in name and os.access(path, os.X_OK) and not os.path.isdir(path):
            names.append(name)
    return names


def app_list(bin_dir, app):
    """The app's --list JSON ({} when it fails: the contract tests say why)."""
    try:
        out = subprocess.run([os.path.join(bin_dir, "mapp-" + app), "--list"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
        return json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}


def has_cuda(listing):
    return any(b.get("name") == "cuda" for v in listing.get("variants", []) for b in v.get("backends", []))


def folder_checks(app):
    """(place as the page names it, test(src, listing) -> bool) in the app's folder."""
    folder = "miniapps/%s/" % app
    exists = lambda rel: lambda src, _: os.path.exists(os.path.join(src, folder, rel))
    matches = lambda pattern: lambda src, _: bool(glob.glob(os.path.join(src, folder, pattern)))
    return [
        ("<app>.h", exists(app + ".h")),
        ("<app>_app.c", matches("*_app.c")),
        ("<app>_kernel.h", matches("*_kernel*.h")),
        ("a file a backend", lambda src, _: any(not re.search(r"(^main|^bench|_app)\.c$", os.path.basename(f))
                                                for f in glob.glob(os.path.join(src, folder, "*.c")))),
        ("main.c", exists("main.c")),
        ("bench.c", exists("bench.c")),
        ("README.md", exists("README.md")),
        ("tests/bad_input.txt", exists("tests/bad_input.txt")),
        ("mapp_add_app_tests", lambda src, _: "mapp_add_app_tests(%s)" % app in read(src, folder + "tests/CMakeLists.txt")),
        ('"headline"', lambda _, listing: "headline" in listing),
    ]


def outside_checks(app):
    """(place, test) outside the app's folder; the cuda ones only for an app with a cuda backend."""
    word = re.compile(r"(?<![\w-])%s(?![\w-])" % re.escape(app))
    declared = lambda src, _: any(line.split()[:1] == [app] for line in read(src, "tests/options/declarations.txt").splitlines())
    baselines = lambda src, _: all(os.path.exists(os.path.join(src, "baselines", app, f))
                                   for f in ("tiny.h5", "tiny-weak2.h5", "tiny-weak4.h5"))
    quick = lambda src, _: re.search(r"app:\s*%s\s*$" % re.escape(app), read(src, "harness/sweeps/quick.yaml"), re.M)
    sim = lambda src, _: bool(re.search(r'apps=\$\{APPS:-"[^"]*\b%s\b' % re.escape(app), read(src, "ci/sim-validate.sh")))
    bundle = lambda src, lst: not has_cuda(lst) or any(
        word.search(line) for line in read(src, "ci/gpu-bundle.sh").splitlines() if line.strip().startswith("for app in"))
    acceptance = lambda src, lst: not has_cuda(lst) or bool(re.search(r"check_answer %s " % re.escape(app),
                                                                       read(src, "ci/gpu-acceptance.sh")))
    return [
        ("add_subdirectory(miniapps/<app>)", lambda src, _: "add_subdirectory(miniapps/%s)" % app in read(src, "CMakeLists.txt")),
        ("tests/options/declarations.txt", declared),
        ("baselines/<app>/", baselines),
        ("harness/sweeps/quick.yaml", quick),
        ("ci/sim-validate.sh", sim),
        ("ci/gpu-bundle.sh", bundle),
        ("ci/gpu-acceptance.sh", acceptance),
    ]


def check_app(src, app, listing):
    problems = []
    for place, test in folder_checks(app):
        if not test(src, listing):
            problems.append("%s: its folder miniapps/%s/ lacks %s" % (app, app, place))
    for place, test in outside_checks(app):
        if not test(src, listing):
            problems.append("%s: missing from %s" % (app, place))
    return problems


def check_page(src):
    """Every place checked is named on the page."""
    page = read(src, PAGE)
    if not page:
        return ["%s is missing" % PAGE]
    return ["%s does not name the place '%s' (it lists every place a new app has)" % (PAGE, place)
            for place, _ in folder_checks("APP") + outside_checks("APP") if place not in page]


def self_test(src):
    """A planted app that is nowhere, with a cuda backend and no headline, fails every check."""
    planted = "plantedapp"
    listing = {"variants": [{"name": "a", "backends": [{"name": "cuda"}]}]}
    problems = check_app(src, planted, listing)
    want = len(folder_checks(planted)) + len(outside_checks(planted))
    if len(problems) != want:
        return ["self-test: a planted app that is nowhere failed %d of the %d checks" % (len(problems), want)]
    print("self-test: a planted app that is nowhere fails all %d checks" % want)
    return []


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--self-test"):
        sys.stderr.write("usage: check_app_places.py BIN_DIR SOURCE_DIR [--self-test]\n")
        return 2
    bin_dir, src = argv[1], argv[2]
    apps = built_apps(bin_dir)
    if not apps:
        sys.stderr.write("check_app_places.py: error: no mapp-APP executables in %s\n" % bin_dir)
        return 2
    problems = check_page(src)
    for app in apps:
        problems += check_app(src, app, app_list(bin_dir, app))
    if len(argv) == 4:
        problems += self_test(src)
    for p in problems:
        print("FAIL: " + p)
    if not problems:
        print("%d built apps (%s) are in every place %s lists" % (len(apps), " ".join(apps), PAGE))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
