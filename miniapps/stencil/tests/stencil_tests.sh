#!/usr/bin/env bash
# stencil_tests.sh CASE WORKDIR: the hand-written tests of mapp-stencil (one
# case per ctest test), for the program STENCIL_PROGRAM (default
# shallow-water; the cases are the same for every program, what differs is
# in the table below). Needs MAPP_BIN_DIR and MAPP_SOURCE_DIR (mapp_add_test
# sets both) and mpirun on PATH. Every case exits non-zero on failure.
set -u
case_name=$1 work=$2
program=${STENCIL_PROGRAM:-shallow-water}
bin=$MAPP_BIN_DIR/mapp-stencil
# What the cases need to know of each program: its answer datasets, its
# calls, the first NaN a NaN in the initial state makes (eager and
# orchestrated must name the same), a negative answer and where it first
# shows, fields a clean run keeps non-negative. A program without an entry
# (one with the generic physics) gets them from its own runs: its datasets
# from its answer file, its calls from its record; a NaN or a negative value
# anywhere, named alike by both modes; the negative one from an initial
# state at --amplitude 3 (the generic state is 1 + amplitude x a sum of
# sines), checked on every state field, which a clean run keeps
# non-negative. A program whose state may be negative needs an entry.
case $program in
shallow-water)
  datasets="h u v" ncalls=27
  nan_message="check nan failed: stencil flux_x wrote NaN to field flux_x at \(12,12\) in step 0"
  negative_args="--amplitude -1.5 --check negative=h"
  negative_message="check negative failed: stencil advect_y wrote -1.49508 to field h at \(10,10\) in step 0"
  clean_negative=h,pv ;;
vertical)
  datasets="q dp u v" ncalls=19
  nan_message="check nan failed: stencil dp_flux_x wrote NaN to field dp_flux_x at \(12,12\) in step 0"
  negative_args="--amplitude -1 --check negative=q"
  negative_message="check negative failed: stencil solve_top wrote -3.28414e-05 to field q at \(0,0\) in step 0"
  clean_negative=q,dp,dp_new ;;
*)
  datasets="" ncalls="" negative_args="" clean_negative=""
  nan_message="check nan failed: stencil [a-z0-9_]+ wrote NaN to field [a-z0-9_]+ at \([0-9]+,[0-9]+\) in step 0"
  negative_message="check negative failed: stencil [a-z0-9_]+ wrote -[0-9.e+-]+ to field [a-z0-9_]+ at \([0-9]+,[0-9]+\) in step 0" ;;
esac
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OMP_WAIT_POLICY=passive
fail() { echo "FAIL: $*"; exit 1; }
# cache_of MODE: the cache flag of an orchestrated mode (eager takes none)
cache_of() { [ "$1" = eager ] || echo --cache cache; }
stencil() { "$bin" --program "$program" "$@"; } # mapp-stencil running this program
run() { # RANKS ARGS...: run mapp-stencil quietly on RANKS ranks
  local n=$1; shift
  if [ "$n" -eq 1 ]; then stencil --quiet "$@"; else mpirun -q -np "$n" --oversubscribe "$bin" --program "$program" --quiet "$@"; fi
}
answer_datasets() { h5ls "$1" | awk '{print $1}'; } # FILE: the datasets of an answer file
same() { # A B: the program's datasets bit for bit equal
  [ -n "$datasets" ] || datasets=$(answer_datasets "$1")
  [ -n "$datasets" ] || { echo "no datasets in $1"; return 1; }
  for d in $datasets; do h5diff -q "$1" "$2" "$d" "$d" >/dev/null || { echo "dataset $d differs: $1 $2"; return 1; }; done
}
record() { # FILE KEY: a value of app_data from the last record
  python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(eval('r[\"app_data\"]'+sys.argv[2]))" "$1" "$2"
}
check_failed() { # FILE NAME: the record's check NAME failed
  python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); sys.exit(0 if any(c['name'] == sys.argv[2] and not c['passed'] for c in r['verification']['checks']) else 1)" "$1" "$2"
}
same_message() { # MODE LINE: the first mode's line is kept; the next must equal it
  [ -n "$1" ] || { echo "$2: no message"; return 1; }
  [ -z "${first_message:-}" ] || [ "$2" = "$first_message" ] || { echo "$1 names another point: $2 (first: $first_message)"; return 1; }
  first_message=$2
}
expect_exit() { # CODE REGEX CMD...: the project's checker (exit code, one stderr line matching REGEX)
  local code=$1 regex=$2; shift 2
  "$MAPP_SOURCE_DIR/miniapps/common/tests/expect_exit.sh" "$code" "$regex" -- "$@" || fail "expected exit $code: $*"
}

case $case_name in
# ---- agreement: eager and orchestrated, 1, 2, 4 and 9 ranks, bit for bit
agree-ranks)
  run 1 --size tiny --mode eager --output ref.h5 || fail "reference run"
  for n in 2 4 9; do
    run $n --size tiny --mode eager --output eager$n.h5 || fail "eager on $n ranks"
    same ref.h5 eager$n.h5 || fail "eager on $n ranks differs from 1 rank"
  done
  run 4 --size tiny --mode eager --layout 4x1 --output eager41.h5 || fail "eager on a 4x1 layout"
  same ref.h5 eager41.h5 || fail "eager on a 4x1 layout differs from 1 rank" ;;
agree-orchestrated) # BACKEND RANKS...
  backend=$3; shift 3
  run 1 --size tiny --mode eager --output ref.h5 || fail "reference run"
  for n in "$@"; do
    run $n --size tiny --mode build-and-run --backend $backend --threads 2 --cache cache --output o$n.h5 || fail "build-and-run on $n ranks"
    same ref.h5 o$n.h5 || fail "$backend build-and-run on $n ranks differs from eager on 1"
  done
  # run mode loads what build-and-run left (no compiler involved)
  run 4 --size tiny --mode run --backend $backend --threads 2 --cache cache --output r4.h5 || fail "run on 4 ranks"
  same ref.h5 r4.h5 || fail "run on 4 ranks differs"
  run 4 --size tiny --mode build-and-run --layout 2x2 --backend $backend --threads 2 --cache cache --output o22.h5 || fail "2x2"
  same ref.h5 o22.h5 || fail "build-and-run on a 2x2 layout differs" ;;
agree-break) # the comparison itself must catch a one-ulp change
  run 1 --size tiny --mode eager --output ref.h5 || fail "reference run"
  MAPP_STENCIL_BREAK=answer run 1 --size tiny --mode build-and-run --cache cache --output broken.h5
  same ref.h5 broken.h5 && fail "a one-ulp change went unnoticed"
  echo "ok: the broken answer was caught" ;;
# ---- invariants and their deliberate breaks
invariant-finite) # every program: a clean run passes; a NaN in the answer fails the finite check
  run 1 --size tiny --result r.json || fail "a clean run failed its checks"
  MAPP_STENCIL_BREAK=nan run 1 --size tiny --result n.json && fail "a NaN passed the checks"
  check_failed n.json finite || fail "the finite check did not fail on a NaN"
  echo "ok: the finite check caught the NaN" ;;
invariant-mass)
  run 1 --size tiny --steps 60 --result r.json || fail "mass not conserved"
  MAPP_STENCIL_BREAK=mass run 1 --size tiny --result b.json && fail "a mass leak passed"
  echo "ok" ;;
invariant-rest)
  run 2 --size tiny --init rest --mode build-and-run --cache cache || fail "rest did not stay at rest"
  MAPP_STENCIL_BREAK=rest run 1 --size tiny --init rest && fail "a perturbed rest state passed"
  echo "ok" ;;
invariant-geostrophic)
  run 1 --size tiny --init geostrophic --amplitude 0.01 --steps 40 --result g.json || fail "geostrophic state drifted"
  record g.json "" >/dev/null
  MAPP_STENCIL_BREAK=geostrophic run 1 --size tiny --init geostrophic --amplitude 0.01 --steps 40 && fail "a drifted state passed"
  echo "ok" ;;
# ---- debug passes, in both modes
debug-nan)
  for m in eager build-and-run; do
    MAPP_STENCIL_BREAK=nan run 2 --size tiny --mode $m $(cache_of $m) --check nan 2>err.txt && fail "$m: NaN not caught"
    same_message $m "$(grep -E "$nan_message" err.txt)" || { cat err.txt; fail "$m: message"; }
    cat err.txt
  done
  run 1 --size tiny --mode build-and-run --cache cache --check nan || fail "a clean run failed --check nan" ;;
debug-negative)
  if [ -z "$negative_args" ]; then
    run 1 --size tiny --steps 1 --output probe.h5 || fail "probe run"
    clean_negative=$(answer_datasets probe.h5 | paste -sd,)
    negative_args="--amplitude 3 --check negative=$clean_negative"
  fi
  for m in eager build-and-run; do
    run 1 --size tiny --mode $m $(cache_of $m) $negative_args 2>err.txt && fail "$m: negative answer not caught"
    same_message $m "$(grep -E "$negative_message" err.txt)" || { cat err.txt; fail "$m: message"; }
    cat err.txt
  done
  run 1 --size tiny --mode build-and-run --cache cache --check negative=$clean_negative || fail "a clean run failed --check negative" ;;
debug-trace)
  run 1 --size tiny --steps 2 --mode eager --trace 5,7 --progress > eager.txt || fail "eager trace"
  run 4 --size tiny --steps 2 --mode build-and-run --cache cache --trace 5,7 --progress --result orch.json > orch.txt || fail "orchestrated trace"
  [ -n "$ncalls" ] || ncalls=$(record orch.json "['plan']['stencil_calls']")
  [ "$(grep -c '^progress step 1 ' eager.txt)" -eq $ncalls ] || fail "progress does not name the $ncalls stencils"
  [ "$(grep -c '^trace step 1 ' eager.txt)" -eq $ncalls ] || fail "trace does not print $ncalls fields"
  diff <(grep '^trace' eager.txt) <(grep '^trace' orch.txt) || fail "traces differ between the modes"
  diff <(grep '^progress' eager.txt) <(grep '^progress' orch.txt) || fail "progress differs between the modes"
  echo "ok" ;;
# ---- the cache
cache-distributed) # one build per class, concurrently; then none
  mpirun -q -np 4 --oversubscribe "$bin" --program "$program" --size tiny --layout 2x2 --mode build-and-run --cache cache --result a.json || fail "cold"
  [ "$(record a.json "['builds']")" = 4 ] || fail "cold build ran $(record a.json "['builds']") builds, expected 4 (one per class)"
  mpirun -q -np 4 --oversubscribe "$bin" --program "$program" --size tiny --layout 2x2 --mode build-and-run --cache cache --result b.json || fail "warm"
  [ "$(record b.json "['builds']")" = 0 ] || fail "warm run rebuilt"
  [ "$(ls cache | wc -l)" = 4 ] || fail "cache holds $(ls cache | wc -l) entries, expected 4"
  echo "ok: 4 builds cold, 0 warm" ;;
cache-layouts) # the seed's workflow: build on 3x3, copy, run larger; built on 2x2, loaded on 3x3
  run 1 --size tiny --mode eager --output ref.h5 || fail "reference"
  mpirun -q -np 4 --oversubscribe "$bin" --program "$program" --quiet --size tiny --layout 2x2 --mode build --cache c22 --result b22.json || fail "build 2x2"
  cp -r c22 c33
  mpirun -q -np 9 --oversubscribe "$bin" --program "$program" --quiet --size tiny --layout 3x3 --mode build-and-run --cache c33 --result r33.json --output o33.h5 || fail "3x3 on the 2x2 cache"
  [ "$(record r33.json "['builds']")" = 5 ] || fail "3x3 built $(record r33.json "['builds']") classes, expected the 5 missing"
  same ref.h5 o33.h5 || fail "3x3 from a 2x2 cache differs"
  cp -r c33 copied
  mpirun -q -np 16 --oversubscribe "$bin" --program "$program" --quiet --size tiny --layout 4x4 --mode run --cache copied --output o44.h5 || fail "4x4 run mode on the 3x3 cache"
  same ref.h5 o44.h5 || fail "4x4 from a 3x3 cache differs"
  echo "ok" ;;
cache-atomic) # concurrent builders of one key, and a build killed mid-compile
  stencil --quiet --size tiny --mode build-and-run --cache cache & p1=$!
  stencil --quiet --size tiny --mode build-and-run --cache cache & p2=$!
  wait $p1 || fail "first concurrent builder"
  wait $p2 || fail "second concurrent builder"
  [ "$(ls cache | wc -l)" = 1 ] || fail "concurrent builders left $(ls cache | wc -l) entries"
  [ -z "$(ls -A cache | grep '^\.')" ] || fail "temporary folders left: $(ls -A cache)"
  stencil --quiet --size tiny --mode run --cache cache || fail "the entry two builders raced for does not load"
  # a compiler that hangs: the build is killed before the entry is published
  printf '#!/bin/sh\n[ "$1" = --version ] && exec cc --version\nsleep 30\n' > slow-cc && chmod +x slow-cc
  MAPP_STENCIL_CC=$PWD/slow-cc setsid "$bin" --program "$program" --quiet --size tiny --mode build --cache killed & victim=$!
  sleep 1; kill -KILL -- -$victim 2>/dev/null || kill -KILL $victim; wait $victim 2>/dev/null
  expect_exit 2 "no cache entry for class wesn" env MAPP_STENCIL_CC=$PWD/slow-cc "$bin" --program "$program" --size tiny --mode run --cache killed
  stencil --quiet --size tiny --mode build-and-run --cache killed || fail "no rebuild after an interrupted build"
  echo "ok" ;;
cache-staleness)
  "$MAPP_SOURCE_DIR/miniapps/stencil/tests/cache_staleness.sh" "$bin" "$program" ;;
# ---- the vertical program's own invariants, each shown to fail
invariant-constant) # a constant tracer stays constant (to round-off: the solve)
  run 2 --size tiny --init constant --mode build-and-run --cache cache || fail "a constant tracer did not stay constant"
  MAPP_STENCIL_BREAK=constant run 1 --size tiny --init constant && fail "a perturbed constant passed"
  echo "ok" ;;
invariant-residual) # the tridiagonal solve's residual
  run 1 --size tiny --nz 40 --result r.json || fail "the solve's residual"
  MAPP_STENCIL_BREAK=residual run 1 --size tiny && fail "a skewed system passed the residual check"
  echo "ok" ;;
# ---- a baseline of this program (baselines/stencil/CASE.h5), checked by mapp check
baseline) # CASE RANKS MODE [SCALING]: strong (default) or weak
  scaling=${6:-strong}
  run "$4" --size tiny --scaling "$scaling" --mode "$5" $(cache_of "$5") --output out.h5 || fail "run"
  "$MAPP_BIN_DIR/mapp" check "$MAPP_SOURCE_DIR/baselines/stencil/$3.h5" out.h5 || fail "differs from baseline $3"
  MAPP_STENCIL_BREAK=answer run "$4" --size tiny --scaling "$scaling" --output broken.h5 || fail "broken run"
  "$MAPP_BIN_DIR/mapp" check "$MAPP_SOURCE_DIR/baselines/stencil/$3.h5" broken.h5 >/dev/null && fail "a one-ulp change passed the baseline"
  echo "ok" ;;
# ---- --min-time: the timed steps again from the reset state, the same answer
min-time) # RANKS [BACKEND...]
  # Every mode that runs steps, on each backend given (default: serial and
  # omp), with --min-time 0.05 (the reset hook zeroes the fields and
  # initialises them again; the loaded program stays) gives eager's answer
  # without it, bit for bit (the modes agree: agree.*), and its record says
  # the steps ran more than once. build-and-run builds the cache that run
  # then loads.
  n=$3; shift 3
  backends=${*:-serial omp}
  # repeated NAME ARGS... (min_time_repeat.sh): ARGS with --min-time, the answer
  # against ref.h5, the timed phase repeated.
  run_case() { run $n "$@"; }
  . "$(dirname "${BASH_SOURCE[0]}")/../../common/tests/min_time_repeat.sh"
  run $n --size tiny --mode eager --output ref.h5 || fail "reference run"
  for m in eager build-and-run run; do
    for backend in $backends; do
      repeated $m-$backend --size tiny --mode $m --backend $backend $(cache_of $m)
      echo "ok $m $backend on $n rank(s): $ran iterations, bit for bit eager's answer without --min-time"
    done
  done ;;
*) fail "unknown case $case_name" ;;
esac
