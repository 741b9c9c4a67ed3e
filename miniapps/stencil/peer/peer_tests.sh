#!/usr/bin/env bash
# ctest cases of the GT4Py peer (stencil.peer.*):
#   peer_tests.sh CASE LAUNCHER WORKDIR BUILD_VENV SOURCE_VENV
# The venv is the launcher's ($MAPP_PEERS_VENV, else BUILD_VENV, else
# SOURCE_VENV); without it every case but no_venv skips (exit 77) saying so.
# GT4Py's and DaCe's caches are the launcher's (the build's
# peers-cache/stencil-gt4py): a cold first run compiles the 25 stencils for
# each GT backend (minutes on 2 cores), later runs load them (seconds).
# Needs MAPP_SOURCE_DIR and MAPP_BIN_DIR (mapp_add_test sets them).
. "$(dirname "$0")/../../common/peer/peer_tests_lib.sh" "$@"
if ! "$py" -c 'import gt4py, dace' 2>/dev/null; then
  echo "SKIP: the peers venv at $venv has no gt4py/dace (ci/peer-venv.sh installs miniapps/stencil/peer/requirements.txt)"
  exit 77
fi

# answer CASE ARGS...: the peer's tiny answer against the mini-app's
# baseline at the stated tolerance (rel-max 1e-12: the same arithmetic, the
# measured difference 0), and its record.
answer() {
  local variant=$1; shift
  start=$(date +%s%N)
  "$exe" --size tiny --variant "$variant" "$@" --output peer.h5 --result peer.json \
    || fail "the peer's tiny $variant run exited $?"
  end=$(date +%s%N)
  echo "peer tiny $variant run: $(( (end - start) / 1000000 )) ms"
  "$py" - peer.json "$variant" <<'PY' || fail "record"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert r["app"] == "stencil-gt4py" and r["peer_of"] == "stencil" and r["variant"] == sys.argv[2], r
assert r["case"] == "tiny" and r["steps"] == 20, r
assert r["baseline_tolerance"] == {"model": "rel-max", "bound": 1e-12}, r["baseline_tolerance"]
assert r["verification"]["status"] == "pass", r["verification"]
assert {c["name"] for c in r["verification"]["checks"]} >= {"finite", "mass-conservation"}
assert r["fom"]["name"] == "cell-updates/s" and r["fom"]["value"] > 0
assert r["app_data"]["stencil_calls"] == 27 and r["app_data"]["step_s"] > 0
print("record:", r["app_data"]["gt_backend"], "step_s", r["app_data"]["step_s"],
      "stencil_build_s", r["app_data"]["stencil_build_s"], "build_s", r["app_data"].get("build_seconds"),
      "load_s", r["app_data"].get("load_seconds"))
PY
  "$bin/mapp" check "$src/baselines/stencil/tiny.h5" peer.h5 --model rel-max --bound 1e-12 \
    || fail "mapp check: the peer's answer is not the mini-app's baseline's within 1e-12 of each field's maximum"
}

# program3d MODE PROGRAM BASELINE ARGS...: a 3-D program's tiny answer
# against its baseline at the stated tolerance, and its record's checks.
program3d() {
  local mode=$1 program=$2 baseline=$3
  shift 3
  local backend=()
  [ "$mode" = python ] && backend=(--gt-backend numpy)
  "$exe" --size tiny --program "$program" --variant "$mode" "${backend[@]}" "$@" --output "$program.h5" \
    --result "$program.json" || fail "the peer's tiny $program $mode run exited $?"
  "$py" - "$program.json" "$program" <<'PY' || fail "record of $program"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
a = r["app_data"]
assert a["program"] == sys.argv[2] and r["verification"]["status"] == "pass", (a["program"], r["verification"])
assert a["stencil_calls"] == {"vertical": 19, "hydrostatic": 6}[sys.argv[2]], a["stencil_calls"]
print(sys.argv[2], a["mode"], "nz", a["nz"], "checks", [(c["name"], c["value"]) for c in r["verification"]["checks"]])
PY
  "$bin/mapp" check "$src/baselines/stencil/$baseline" "$program.h5" --model rel-max --bound 1e-12 \
    || fail "mapp check: the peer's $program ($mode) is not $baseline within 1e-12 of each field's maximum"
}

case $case_ in
  answer_tiny)
    # GT4Py's numpy backend: the same stencils and the same answer bit for
    # bit as the compiled gt:cpu_* backends, without the minutes their cold
    # compile of 25 stencils takes (the sweep harness/sweeps/stencil-peer.yaml
    # runs those).
    answer python --gt-backend numpy
    # Other physics fails it: another Courant number (the same shapes).
    "$exe" --size tiny --gt-backend numpy --cfl 0.31 --output other.h5 >/dev/null || fail "the peer at --cfl 0.31"
    "$bin/mapp" check "$src/baselines/stencil/tiny.h5" other.h5 --model rel-max --bound 1e-12 >other.txt
    [ $? -eq 1 ] || fail "another time step passed: $(cat other.txt)"
    echo "another time step: $(grep -c ' FAIL (' other.txt) of 3 fields FAIL"
    ;;
  answer_tiny_3d)
    # The 3-D programs (FORWARD/BACKWARD computations over intervals) on
    # GT4Py's numpy backend against the mini-app's baselines, the vertical
    # program at 8 and 4 levels and from a constant tracer (its checks), and
    # a planted change of one vertical body failing the check.
    program3d python vertical vertical-tiny.h5
    program3d python vertical vertical-nz4-tiny.h5 --nz 4
    program3d python hydrostatic hydrostatic-tiny.h5
    "$exe" --size tiny --program vertical --init constant --gt-backend numpy --result constant.json >/dev/null \
      || fail "vertical from a constant tracer exited $?"
    grep -q '"constant-stays-constant"' constant.json || fail "no constant-stays-constant check in the record"
    MAPP_STENCIL_PEER_PLANT=coupling "$exe" --size tiny --program vertical --gt-backend numpy --output planted.h5 \
      >/dev/null || fail "the planted run exited $?"
    "$bin/mapp" check "$src/baselines/stencil/vertical-tiny.h5" planted.h5 --model rel-max --bound 1e-12 >planted.txt
    [ $? -eq 1 ] || fail "a planted change of the coupling body passed: $(cat planted.txt)"
    echo "planted coupling change: $(grep -c ' FAIL (' planted.txt) of 4 fields FAIL"
    ;;
  answer_tiny_omp)
    # Python mode on 2 threads, both GridTools backends, three runs each:
    # every answer the baseline's (GT4Py's wrong ghosts from a temporary
    # under horizontal regions were once a race here; sw_stencils.py).
    for gtb in gt:cpu_ifirst gt:cpu_kfirst; do
      for run in 1 2 3; do
        answer python --gt-backend "$gtb" --backend omp --threads 2
      done
    done
    ;;
  race_probe)
    # Every call of the shallow-water step alone on 1 and 2 threads against
    # GT4Py's numpy backend, gt:cpu_kfirst: none differs; with the ghost
    # images planted back into a gtscript temporary the probe names the
    # ghost calls (the test can fail).
    probe=$src/miniapps/stencil/peer/race_probe.py
    gt_cache=${GT_CACHE_ROOT:-$bin/../peers-cache/stencil-gt4py/gt} # the launcher's
    GT_CACHE_ROOT="$gt_cache" "$py" "$probe" --gt-backend gt:cpu_kfirst --threads 1,2,2 --out probe \
      >probe.txt 2>&1 || fail "race_probe.py found calls that differ: $(cat probe.txt)"
    tail -1 probe.txt
    GT_CACHE_ROOT="$gt_cache" MAPP_STENCIL_PEER_PLANT=ghost-temporary "$py" "$probe" \
      --gt-backend gt:cpu_kfirst --threads 1,2 --only ghost_h,ghost_u,ghost_v --out planted >planted.txt 2>&1
    [ $? -eq 1 ] || fail "the planted temporary was not found: $(cat planted.txt)"
    grep -q '^c00 ghost_h .*WRONG' planted.txt || fail "the probe does not name ghost_h: $(cat planted.txt)"
    tail -1 planted.txt
    ;;
  answer_tiny_3d_orchestrated)
    program3d build-and-run vertical vertical-tiny.h5 --cache "$work/dacecache"
    program3d build-and-run hydrostatic hydrostatic-tiny.h5 --cache "$work/dacecache"
    ;;
  answer_tiny_orchestrated)
    # build (Pace's pipeline, per-step calls: the defaults), then run from
    # DaCe's cache, then build-and-run: each the baseline's answer; the
    # record names the pipeline and the passes that ran. Then DaCe's default
    # pipeline with the time loop inside the program, for comparison.
    cache=$work/dacecache
    "$exe" --size tiny --variant build --cache "$cache" --result build.json || fail "build exited $?"
    [ -d "$cache/mapp_stencil_gt4py_pace_per_step/build" ] || fail "no program in $cache after build"
    "$py" - build.json <<'PY' || fail "the build's record does not name Pace's pipeline and its passes"
import json, sys
a = json.loads(open(sys.argv[1]).read().splitlines()[-1])["app_data"]
assert a["dace_pipeline"] == "pace" and a["calls"] == "per-step", (a["dace_pipeline"], a["calls"])
names = [p["name"] for p in a["dace_passes"]]
want = ["parse", "register_storage", "make_transients_persistent", "simplify", "splittable_region_expansion",
        "expand_library_nodes", "simplify", "compile"]
assert names == want, names
assert a["dace_settings"]["compiler.cpu.openmp_sections"] is False, a["dace_settings"]
print("passes:", ", ".join(f"{p['name']} {p['seconds']:.2f} s" for p in a["dace_passes"]))
PY
    answer run --cache "$cache"
    answer build-and-run --cache "$cache"
    answer build-and-run --cache "$cache" --dace-pipeline default --calls per-run
    refused --size tiny --variant run --cache "$work/no-such-cache"
    ;;
  harness)
    # mapp run checks the peer against baselines/stencil/tiny.h5 at the
    # tolerance its record states (baseline_tolerance): pass.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    "$bin/mapp" run stencil-gt4py --size tiny --variant python --out results -- --gt-backend numpy >run.txt 2>&1 \
      || fail "mapp run: $(cat run.txt)"
    cat run.txt
    row=$(grep '^stencil-gt4py ' run.txt) || fail "no row for the peer"
    [ "$(echo "$row" | awk '{print $9, $10}')" = "pass pass" ] || fail "verify/baseline not pass/pass: $row"
    ;;
  list)
    "$exe" --list >list.json || fail "--list exited $?"
    "$py" - list.json <<'PY' || fail "--list"
import json, sys
l = json.load(open(sys.argv[1]))
assert l["app"] == "stencil-gt4py" and l["baselines"] == "stencil" and l["peer_of"] == "stencil", l
assert [v["name"] for v in l["variants"]] == ["python", "build", "build-and-run", "run"]
assert [v["alone"] for v in l["variants"]] == [True, False, True, False]
assert [b["name"] for b in l["variants"][0]["backends"]] == ["serial", "omp"]
PY
    [ "$("$exe" --size tiny --print-case)" = "case=tiny size=tiny" ] || fail "--print-case at tiny"
    [ "$("$exe" --size tiny --steps 20 --print-case)" = "case=tiny size=tiny" ] || fail "--print-case --steps 20"
    [ "$("$exe" --size tiny --cfl 0.2 --print-case)" = "case=none size=tiny" ] || fail "--print-case --cfl"
    [ "$("$exe" --size small --nx 100 --print-case)" = "case=none size=custom" ] || fail "--print-case --nx"
    "$exe" --help | grep -q -- '--gt-backend' || fail "--help lists no --gt-backend"
    ;;
  min_time) peer_min_time --variant python --gt-backend numpy ;; # numpy: no cold compile
  bad_output_path | bad_result_path)
    # A path that cannot be created is refused before the work: with a cold
    # cache the build-and-run default would compile for minutes first; the
    # cache stays empty.
    flag=--output path=/nonexistent/answer.h5
    [ "$case_" = bad_result_path ] && flag=--result path=/nonexistent/record.json
    MAPP_CACHE_DIR="$work/cold" refused --size tiny "$flag" "$path"
    grep -qF -- "$flag $path: folder /nonexistent does not exist" err.txt || fail "the line does not name the path"
    [ ! -e "$work/cold" ] || fail "the peer started building ($work/cold exists) before refusing $flag"
    ;;
  bad_flag) refused --size tiny --no-such-flag ;;
  bad_backend) refused --size tiny --backend cuda ;;
  bad_gt_backend) refused --size tiny --variant build-and-run --gt-backend gt:cpu_ifirst ;;
  bad_program) refused --size tiny --program vertical --init rest ;;
  bad_debug) refused --size tiny --check nan ;;
  bad_build_output) refused --size tiny --variant build --output x.h5 ;;
  bad_threads) refused --size tiny --backend omp --threads 5000 ;;
  bad_ranks) OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 refused --size tiny ;;
  *) echo "unknown case $case_" >&2; exit 2 ;;
esac
exit 0
