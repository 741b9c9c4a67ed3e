#!/usr/bin/env bash
# Probe every user-facing executable of a build (mapp-* in BUILD/bin) and
# every verb of `mapp` with bad input, as a hostile but fair user would, and
# count how each answered (issue 14):
#
#   refused     exit 2 with exactly one line on stderr (the contract)
#   refused+    exit 2 with more or fewer lines on stderr
#   system      exit 3 (a system failure: a full disk, a device as output)
#   accepted    exit 0 (the bad input was taken silently) or exit 1 (taken,
#               then the run failed its verification)
#   crash       killed by a signal (segfault, abort)
#   hang        still running after PROBE_TIMEOUT seconds (killed)
#   other       any other exit code
#
# Flags are probed from each executable's --help: every integer (N), real
# (X), file (VALUE), choice (a|b) and list (A,B,C) flag gets the values a
# user could mistype; hand-written probes cover combinations and the verbs.
# Everything runs in a scratch folder, with MAPP_BASELINE_DIR pointing there,
# so the checked-in baselines are never touched.
#
# usage: ci/probe-bad-input.sh [BUILD_DIR]      (default: build)
#   PROBE_TIMEOUT=20   seconds before a probe counts as a hang (the peers'
#                      just-in-time caches are warmed first by one tiny run each)
#   PROBE_VERBOSE=1    print every probe, not only the ones that failed
# Exit 0 when no probe crashed, hung or was accepted; 1 otherwise.
set -u
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SOURCE_DIR/build}" 2>/dev/null && pwd) || { echo "no build folder ${1:-build}" >&2; exit 2; }
BIN=$BUILD/bin
[ -x "$BIN/mapp" ] || { echo "$BIN/mapp is not built" >&2; exit 2; }
TIMEOUT=${PROBE_TIMEOUT:-20}
VERBOSE=${PROBE_VERBOSE:-0}
SCRATCH=$(mktemp -d /tmp/mapp-probe.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH" || exit 2
export MAPP_SOURCE_DIR=$SOURCE_DIR MAPP_BIN_DIR=$BIN MAPP_BASELINE_DIR=$SCRATCH/baselines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIEXEC=$(command -v mpirun || true)

declare -A COUNT=()
OUTCOMES="refused refused+ system accepted crash hang other"
for o in $OUTCOMES; do COUNT[$o]=0; done
TOTAL=0
BAD=()

# probe LABEL -- COMMAND...: runs one bad input and files its outcome.
probe() {
  local label=$1
  shift 2
  local err=$SCRATCH/probe.err code lines outcome
  mkdir -p "$SCRATCH/run" && cd "$SCRATCH/run" || exit 2
  timeout -k 5 "$TIMEOUT" "$@" >/dev/null 2>"$err" </dev/null
  code=$?
  cd "$SCRATCH" || exit 2
  lines=$(grep -c '' "$err")
  case $code in
    0 | 1) outcome=accepted ;;
    2) if [ "$lines" -eq 1 ]; then outcome=refused; else outcome=refused+; fi ;;
    3) outcome=system ;;
    124 | 137) outcome=hang ;;
    *) if [ "$code" -gt 128 ]; then outcome=crash; else outcome=other; fi ;;
  esac
  # A crash inside an MPI run shows as mpirun's exit code with a signal report.
  if [ "$outcome" != crash ] && grep -Eq 'Segmentation fault|signal 11|Aborted|AddressSanitizer|runtime error:' "$err"; then
    outcome=crash
  fi
  COUNT[$outcome]=$((COUNT[$outcome] + 1))
  TOTAL=$((TOTAL + 1))
  local line
  line=$(printf '%-9s exit %-3s %s :: %s' "$outcome" "$code" "$label" "$(head -c 300 "$err" | tr '\n' ' ')")
  case $outcome in
    accepted | crash | hang) BAD+=("$line") ;;
  esac
  if [ "$VERBOSE" = 1 ] || [ "$outcome" = refused+ ] || [ "$outcome" = other ]; then echo "$line"; fi
}

# ---------------------------------------------------------------- fixtures
mkdir -p "$SCRATCH/baselines" "$SCRATCH/noperm"
printf 'not hdf5\n' >garbage.h5
printf 'name: [unclosed\n' >broken.yaml
: >empty.yaml
printf 'name: s\nruns:\n  - app: heat\n    ranks: [1]\n    typo_key: 1\n' >unknown-key.yaml
printf 'name: s\nruns:\n  - app: heat\n    ranks: [0]\n' >zero-ranks.yaml
printf 'name: s\nruns:\n  - app: heat\n    ranks: [-2]\n' >negative-ranks.yaml
printf 'name: ../escape\nruns:\n  - app: heat\n    ranks: [1]\n' >escape-name.yaml
printf 'name: s\nruns:\n  - app: nope\n    ranks: [1]\n' >no-app.yaml
printf 'name: s\nrepetitions: 0\nruns:\n  - app: heat\n    ranks: [1]\n' >zero-reps.yaml
printf 'name: s\nruns:\n  - app: heat\n    ranks: [1]\n    variants: [nope]\n' >no-variant.yaml
printf 'name: s\nruns:\n  - app: heat\n    ranks: [1]\n    sizes: [huge]\n' >no-size.yaml
printf 'name: s\nruns:\n  - app: heat\n    ranks: [1048576]\n' >huge-ranks.yaml
printf 'name: s\nruns: 5\n' >runs-scalar.yaml
printf 'name: s\nruns:\n  - app: heat\n    ranks: [1]\n    args: ["--no-such-flag"]\n' >bad-args.yaml
printf 'name: e\nlauncher: mpirun\n' >env-incomplete.yaml
printf 'name: e\nlauncher: mpirun\nnp_flag: -np\nscheduler: pbs\n' >env-scheduler.yaml
printf 'name: e\nlauncher: mpirun\nnp_flag: -np\ncores_per_node: 0\n' >env-cores.yaml
printf 'name: e\nlauncher: mpirun\nnp_flag: -np\nsimulated: maybe\n' >env-simulated-maybe.yaml
printf 'name: e\nlauncher: mpirun\nnp_flag: -np\nplatform: p.xml\n' >env-platform-only.yaml
printf 'name: e\nlauncher: mpirun\nnp_flag: -np\nsimulated: true\n' >env-simulated-no-platform.yaml
mkdir -p jobs5 jobsarray jobsgarbage jobsempty jobsnojobs results-garbage results-empty results-half
printf '{"jobs":5}\n' >jobs5/jobs.json
printf '[]\n' >jobsarray/jobs.json
printf '{"jobs": [\n' >jobsgarbage/jobs.json
: >jobsempty/jobs.json
printf '{"sweep":"s","runs_dir":"/tmp","repetitions":1,"jobs":[]}\n' >jobsnojobs/jobs.json
printf 'name: c\ncheck: maybe\nruns:\n  - app: heat\n    ranks: [1]\n' >check-maybe.yaml
printf 'name: w\nweak_reference: yes\nruns:\n  - app: heat\n    ranks: [1]\n' >weak-reference-yes.yaml
printf 'name: w\nruns:\n  - app: heat\n    ranks: [1]\n    weak_reference: 1\n' >weak-reference-one.yaml
printf 'name: t\ntime_limit: -1\nruns:\n  - app: heat\n    ranks: [1]\n' >time-limit-negative.yaml
printf 'name: t\nruns:\n  - app: heat\n    ranks: [1]\n    time_limit: soon\n' >time-limit-word.yaml
printf 'name: t\nretries: x\nruns:\n  - app: heat\n    ranks: [1]\n' >retries-word.yaml
printf 'name: t\nruns:\n  - app: heat\n    ranks: [1]\n    retries: 1.5\n' >retries-fraction.yaml
printf 'this is not json\n' >results-garbage/results.jsonl
: >results-empty/results.jsonl
printf '{"app":"heat","ranks":1' >results-half/results.jsonl
H5TOOL=$BUILD/harness/tests/mapp-h5-tool
if [ -x "$H5TOOL" ]; then
  "$H5TOOL" make a45.h5 temperature 4 5 >/dev/null 2>&1
  "$H5TOOL" make a55.h5 temperature 5 5 >/dev/null 2>&1
  "$H5TOOL" make other.h5 pressure 4 5 >/dev/null 2>&1
fi
# An existing baseline that a bless without --force must not replace.
mkdir -p baselines/heat && cp a45.h5 baselines/heat/tiny.h5 2>/dev/null

# ---------------------------------------------------------------- mapp-* from --help
# Prints "FLAG<US>METAVAR<US>HELPTEXT" (US: the unit separator, as a tab
# would collapse an empty METAVAR) for each option of the executable's --help.
US=$'\x1f'
options_of() {
  "$1" --help 2>/dev/null | sed -nE -e "s/^  (--[a-z0-9-]+) ([^ ]+) +(.*)\$/\1$US\2$US\3/p" \
    -e "s/^  (--[a-z0-9-]+)  +(.*)\$/\1$US$US\2/p"
}

probe_flag() { # EXE FLAG METAVAR HELP BASE...
  local exe=$1 flag=$2 meta=$3 help=$4 name
  shift 4
  name=$(basename "$exe")
  local base=("$@")
  [ "$flag" = --size ] && base=()
  case $meta in
    N)
      for v in abc 1.5 99999999999999999999 ''; do probe "$name $flag '$v'" -- "$exe" "${base[@]}" "$flag" "$v"; done
      # -1 is fair where the help says negative values mean something (zstd's fast levels).
      grep -q 'negative' <<<"$help" || probe "$name $flag '-1'" -- "$exe" "${base[@]}" "$flag" -1
      grep -Eq '\(0:|default 0\)|>= 0| 0: ' <<<"$help" || probe "$name $flag 0" -- "$exe" "${base[@]}" "$flag" 0 ;;
    X)
      for v in nan inf -inf abc 1e999 ''; do probe "$name $flag '$v'" -- "$exe" "${base[@]}" "$flag" "$v"; done
      # 0 is a fair value of many reals (a wind, an amplitude); not of a step or a length in units.
      grep -Eq '\((s|m)\)|> 0' <<<"$help" && probe "$name $flag 0" -- "$exe" "${base[@]}" "$flag" 0 ;;
    VALUE)
      # Under a regular file: it can neither be read nor created (nothing outside the scratch folder is touched).
      probe "$name $flag garbage.h5/sub/f" -- "$exe" "${base[@]}" "$flag" "$SCRATCH/garbage.h5/sub/f"
      probe "$name $flag ''" -- "$exe" "${base[@]}" "$flag" '' ;;
    *'|'*)
      probe "$name $flag nope" -- "$exe" "${base[@]}" "$flag" nope
      probe "$name $flag ''" -- "$exe" "${base[@]}" "$flag" '' ;;
    *','*)
      local n
      n=$(tr -cd ',' <<<"$meta" | wc -c)
      local nans=nan
      for ((k = 0; k < n; ++k)); do nans+=",nan"; done
      local short=1
      for ((k = 1; k < n; ++k)); do short+=",1"; done
      probe "$name $flag $nans" -- "$exe" "${base[@]}" "$flag" "$nans"
      probe "$name $flag $short (one value short)" -- "$exe" "${base[@]}" "$flag" "$short"
      probe "$name $flag words" -- "$exe" "${base[@]}" "$flag" a,b,c,d,e,f ;;
  esac
  # A flag that takes a value, given none (last on the line).
  [ -n "$meta" ] && probe "$name $flag (no value)" -- "$exe" "${base[@]}" "$flag"
}

probe_app() {
  local exe=$1 name
  name=$(basename "$exe")
  local base=()
  "$exe" --help 2>/dev/null | grep -q -- '--size' && base=(--size tiny)
  probe "$name --no-such-flag" -- "$exe" --no-such-flag
  probe "$name stray positional" -- "$exe" "${base[@]}" stray
  probe "$name -x" -- "$exe" -x
  while IFS=$US read -r flag meta help; do
    case $flag in --help | --list | --quiet) continue ;; esac
    probe_flag "$exe" "$flag" "$meta" "$help" "${base[@]}"
  done < <(options_of "$exe")
  if "$exe" --help 2>/dev/null | grep -q -- '--output'; then
    probe "$name --output /dev/full" -- "$exe" "${base[@]}" --output /dev/full
    probe "$name --output (a folder)" -- "$exe" "${base[@]}" --output "$SCRATCH"
    probe "$name --result /dev/full" -- "$exe" "${base[@]}" --result /dev/full
    [ -n "$MPIEXEC" ] && probe "$name -np 2 --output /dev/full" -- "$MPIEXEC" -np 2 "$exe" "${base[@]}" --output /dev/full
  fi
  if "$exe" --help 2>/dev/null | grep -q -- '--backend'; then
    "$exe" --list 2>/dev/null | grep -q '"cuda"' || true
    probe "$name --backend cuda (if not built)" -- "$exe" "${base[@]}" --backend cuda
  fi
}

probe_bench() {
  local exe=$1 name
  name=$(basename "$exe")
  for flag in --benchmark_repetitions=-1 --benchmark_repetitions=0 --benchmark_repetitions=abc \
              --benchmark_format=xml --benchmark_out_format=xml --benchmark_min_time=-1 --benchmark_min_time=abc \
              --benchmark_min_warmup_time=-1 --benchmark_color=maybe --benchmark_time_unit=h \
              --benchmark_list_tests=maybe --benchmark_context=novalue --benchmark_filter=zzz_matches_nothing \
              --benchmark_out= --no-such-flag stray; do
    probe "$name $flag" -- "$exe" "$flag"
  done
}

# Combinations --help cannot suggest.
probe_app_specific() {
  if [ -x "$BIN/mapp-snapshots-devito" ]; then
    local d=$BIN/mapp-snapshots-devito
    probe "mapp-snapshots-devito without its venv" -- env MAPP_PEERS_VENV=/nonexistent "$d" --size tiny
    probe "mapp-snapshots-devito --space-order 6 (Devito could, the app cannot)" -- "$d" --size tiny --space-order 6
    probe "mapp-snapshots-devito --variant stream (streaming is the app's)" -- "$d" --size tiny --variant stream
    [ -n "$MPIEXEC" ] && probe "mapp-snapshots-devito -np 2 (one rank)" -- "$MPIEXEC" -np 2 "$d" --size tiny
  fi
  if [ -x "$BIN/mapp-stencil-gt4py" ]; then
    local g=$BIN/mapp-stencil-gt4py
    probe "mapp-stencil-gt4py without its venv" -- env MAPP_PEERS_VENV=/nonexistent "$g" --size tiny
    probe "mapp-stencil-gt4py --variant eager (the app's name; the peer's is python)" -- "$g" --size tiny --variant eager
    probe "mapp-stencil-gt4py --program hydrostatic --init constant (the vertical program's)" -- "$g" --size tiny --program hydrostatic --init constant
    probe "mapp-stencil-gt4py --dace-pipeline with --variant python" -- "$g" --size tiny --dace-pipeline default
    probe "mapp-stencil-gt4py --calls with --variant python" -- "$g" --size tiny --calls per-run
    probe "mapp-stencil-gt4py --init constant (the vertical program's)" -- "$g" --size tiny --init constant
    probe "mapp-stencil-gt4py --check nan (the app's debug pass)" -- "$g" --size tiny --check nan
    probe "mapp-stencil-gt4py --layout 2x2 (one rank)" -- "$g" --size tiny --layout 2x2
    probe "mapp-stencil-gt4py orchestrated with a GT backend" -- "$g" --size tiny --mode build-and-run --gt-backend gt:cpu_ifirst
    probe "mapp-stencil-gt4py --mode run without a cache" -- "$g" --size tiny --mode run --cache "$SCRATCH/no-dace-cache"
    probe "mapp-stencil-gt4py --cache with --variant python" -- "$g" --size tiny --cache "$SCRATCH/c"
    probe "mapp-stencil-gt4py --mode build --output" -- "$g" --size tiny --mode build --output x.h5
    probe "mapp-stencil-gt4py --threads beyond 4096" -- "$g" --size tiny --backend omp --threads 5000
    probe "mapp-stencil-gt4py --scaling strong --weak-ranks 2" -- "$g" --size tiny --weak-ranks 2
    [ -n "$MPIEXEC" ] && probe "mapp-stencil-gt4py -np 2 (one rank)" -- "$MPIEXEC" -np 2 "$g" --size tiny
  fi
  if [ -x "$BIN/mapp-heat" ]; then
    local h=$BIN/mapp-heat
    probe "mapp-heat --rows/--cols 4294967294 (product wraps to 0)" -- "$h" --rows 4294967294 --cols 4294967294
    probe "mapp-heat --rows/--cols 100000000 (beyond memory)" -- "$h" --rows 100000000 --cols 100000000
    probe "mapp-heat --block-rows larger than rows" -- "$h" --size tiny --block-rows 100000
    probe "mapp-heat --snapshot-every without --nam" -- "$h" --size tiny --snapshot-every 5
    probe "mapp-heat --gif without --nam" -- "$h" --size tiny --gif x.gif
    probe "mapp-heat --gif /dev/full" -- "$h" --size tiny --snapshot-every 5 --nam r.nam --gif /dev/full
    probe "mapp-heat --source nan temperature" -- "$h" --size tiny --source 0,0.5,0.6,nan
    probe "mapp-heat --source outside the plate" -- "$h" --size tiny --source 2,0,0.5,1
    probe "mapp-heat --sources-file garbage" -- "$h" --size tiny --sources-file garbage.h5
    probe "mapp-heat omp backend with variant mpi (not written)" -- "$h" --size tiny --variant mpi --backend omp
    [ -n "$MPIEXEC" ] && probe "mapp-heat -np 8 more ranks than rows" -- "$MPIEXEC" -np 8 "$h" --rows 4 --cols 8
    probe "mapp-heat --poller on variant mpi" -- "$h" --size tiny --poller thread
    probe "mapp-heat --poller with --tampi blocking" -- "$h" --size tiny --variant tasks --backend omp --tampi blocking --poller task
    probe "mapp-heat --tampi on variant forkjoin" -- "$h" --size tiny --variant forkjoin --backend omp --tampi blocking
    probe "mapp-heat --nam-mode rank on one rank" -- "$h" --size tiny --snapshot-every 5 --nam r.nam --nam-mode rank
    probe "mapp-heat --nam-mode without --nam" -- "$h" --size tiny --nam-mode rank
    probe "mapp-heat --nam-checksum without --nam" -- "$h" --size tiny --nam-checksum none
    [ -n "$MPIEXEC" ] && probe "mapp-heat --nam-mode rank, region not creatable" -- \
      "$MPIEXEC" -np 3 "$h" --size tiny --snapshot-every 5 --nam /nonexistent/r.nam --nam-mode rank
    [ -n "$MPIEXEC" ] && probe "mapp-heat --nam-mode rank, --snapshot-every beyond the steps" -- \
      "$MPIEXEC" -np 2 "$h" --size tiny --snapshot-every 500 --nam r.nam --nam-mode rank
  fi
  if [ -x "$BIN/mapp-heat-animate" ]; then
    probe "mapp-heat-animate (no region)" -- "$BIN/mapp-heat-animate"
    probe "mapp-heat-animate garbage region" -- "$BIN/mapp-heat-animate" garbage.h5 --gif x.gif
    probe "mapp-heat-animate missing region" -- "$BIN/mapp-heat-animate" /nonexistent.nam --gif x.gif
  fi
  if [ -x "$BIN/mapp-crm" ]; then
    local c=$BIN/mapp-crm
    probe "mapp-crm --sync on serial" -- "$c" --size tiny --backend serial --sync
    probe "mapp-crm --nx odd" -- "$c" --size tiny --nx 5
    probe "mapp-crm --input garbage" -- "$c" --size tiny --input garbage.h5
    probe "mapp-crm --sounding with --input" -- "$c" --size tiny --sounding dry-stable --input garbage.h5
    [ -n "$MPIEXEC" ] && probe "mapp-crm -np 4 more ranks than CRMs" -- "$MPIEXEC" -np 4 "$c" --instances 2
    probe "mapp-crm sizes whose product is beyond memory" -- "$c" --instances 100000000 --nx 100000 --nz 1000
    probe "mapp-crm a CRM beyond index range" -- "$c" --instances 4 --nx 1073741824 --nz 1073741824
    probe "mapp-crm --chunk on percrm" -- "$c" --size tiny --variant percrm --chunk 16
    probe "mapp-crm --chunk not a count" -- "$c" --size tiny --chunk 1.5
    probe "mapp-crm --chunk 0" -- "$c" --size tiny --chunk 0
    probe "mapp-crm --chunk with a sign" -- "$c" --size tiny --chunk +16
    probe "mapp-crm --chunk all on percrm" -- "$c" --size tiny --variant percrm --chunk all
    probe "mapp-crm --sypd-at zero nodes" -- "$c" --size tiny --sypd-at ne30/0
    probe "mapp-crm --host-work-us negative" -- "$c" --size tiny --host-work-us -1
    probe "mapp-crm --host-work-us beyond 10 s" -- "$c" --size tiny --host-work-us 1e8
    probe "mapp-crm --dycore-exchanges negative" -- "$c" --size tiny --dycore-exchanges -1
    probe "mapp-crm --sypd-at without nodes" -- "$c" --size tiny --sypd-at ne30
    probe "mapp-crm --alloc on a CPU backend" -- "$c" --size tiny --backend serial --alloc per-phase
    probe "mapp-crm --memory on a CPU backend" -- "$c" --size tiny --backend omp --memory managed
    probe "mapp-crm --sampled-ranks natively" -- "$c" --size tiny --scaling weak --cycle-group task --sampled-ranks 1
  fi
  if [ -x "$BIN/mapp-stencil" ]; then
    probe "mapp-stencil --nx/--ny 1073741824 (beyond memory)" -- "$BIN/mapp-stencil" --nx 1073741824 --ny 1073741824
    probe "mapp-stencil --layout 3x3 on 1 rank" -- "$BIN/mapp-stencil" --size tiny --layout 3x3
  fi
}

# ---------------------------------------------------------------- mapp verbs
probe_mapp() {
  local m=$BIN/mapp
  probe "mapp (no verb)" -- "$m"
  probe "mapp nope" -- "$m" nope
  probe "mapp --bogus" -- "$m" --bogus
  probe "mapp list stray" -- "$m" list stray
  probe "mapp list --bogus" -- "$m" list --bogus
  probe "mapp list --env missing" -- "$m" list --env /nonexistent.yaml
  # run
  probe "mapp run (no app)" -- "$m" run
  probe "mapp run nope" -- "$m" run nope
  probe "mapp run heat heat" -- "$m" run heat heat
  probe "mapp run heat --variant nope" -- "$m" run heat --variant nope
  probe "mapp run heat --backend nope" -- "$m" run heat --backend nope
  probe "mapp run heat --backend cuda" -- "$m" run heat --backend cuda
  probe "mapp run heat --backend omp (mpi variant)" -- "$m" run heat --backend omp
  for n in 0 -1 abc 1.5 1048576 99999999999999999999; do probe "mapp run heat -n $n" -- "$m" run heat -n "$n"; done
  probe "mapp run heat -n (no value)" -- "$m" run heat -n
  probe "mapp run heat --threads 0" -- "$m" run heat --threads 0
  probe "mapp run heat --size huge" -- "$m" run heat --size huge
  probe "mapp run heat --scaling diagonal" -- "$m" run heat --scaling diagonal
  probe "mapp run heat --env missing" -- "$m" run heat --env /nonexistent.yaml
  probe "mapp run heat --env broken yaml" -- "$m" run heat --env broken.yaml
  probe "mapp run heat --env incomplete" -- "$m" run heat --env env-incomplete.yaml
  probe "mapp run heat --env unknown scheduler" -- "$m" run heat --env env-scheduler.yaml
  probe "mapp run heat --env 0 cores" -- "$m" run heat --env env-cores.yaml
  probe "mapp run heat --env simulated: maybe" -- "$m" run heat --env env-simulated-maybe.yaml
  probe "mapp run heat --env platform without simulated" -- "$m" run heat --env env-platform-only.yaml
  probe "mapp run heat --env simulated without platform" -- "$m" run heat --env env-simulated-no-platform.yaml
  probe "mapp run heat --out /dev/full/x" -- "$m" run heat --out /dev/full/x
  probe "mapp run heat -- --no-such-flag" -- "$m" run heat -- --no-such-flag
  probe "mapp run heat -- --rows 0" -- "$m" run heat -- --rows 0
  probe "mapp run heat -- --weak-ranks 4 (strong)" -- "$m" run heat -- --weak-ranks 4
  # sweep
  probe "mapp sweep (no spec)" -- "$m" sweep
  probe "mapp sweep missing" -- "$m" sweep /nonexistent.yaml
  for spec in broken empty unknown-key zero-ranks negative-ranks escape-name no-app zero-reps no-variant no-size \
              huge-ranks runs-scalar time-limit-negative time-limit-word retries-word retries-fraction \
              weak-reference-yes weak-reference-one; do
    probe "mapp sweep $spec.yaml" -- "$m" sweep "$spec.yaml" --out sweeps
  done
  probe "mapp sweep --env missing" -- "$m" sweep zero-reps.yaml --env /nonexistent.yaml
  probe "mapp sweep --out /dev/full/x" -- "$m" sweep "$SOURCE_DIR/harness/tests/data/sweep-heat.yaml" --out /dev/full/x
  probe "mapp sweep -- app flags" -- "$m" sweep zero-reps.yaml -- --steps 3
  probe "mapp sweep --junit unwritable" -- "$m" sweep "$SOURCE_DIR/harness/tests/data/sweep-heat.yaml" --out sweeps --junit /nonexistent/j.xml
  probe "mapp sweep --junit a folder" -- "$m" sweep "$SOURCE_DIR/harness/tests/data/sweep-heat.yaml" --out sweeps --junit /tmp
  probe "mapp sweep --retry-failed without --resume" -- "$m" sweep "$SOURCE_DIR/harness/tests/data/sweep-heat.yaml" --retry-failed
  # check
  probe "mapp check (no files)" -- "$m" check
  probe "mapp check one file" -- "$m" check a45.h5
  probe "mapp check three files" -- "$m" check a45.h5 a45.h5 a45.h5
  probe "mapp check missing baseline" -- "$m" check /nonexistent.h5 a45.h5
  probe "mapp check missing candidate" -- "$m" check a45.h5 /nonexistent.h5
  probe "mapp check not HDF5" -- "$m" check garbage.h5 a45.h5
  probe "mapp check other shape" -- "$m" check a45.h5 a55.h5
  probe "mapp check dataset missing" -- "$m" check a45.h5 other.h5
  probe "mapp check --model nope" -- "$m" check a45.h5 a45.h5 --model nope
  probe "mapp check --bound -1" -- "$m" check a45.h5 a45.h5 --model abs --bound -1
  probe "mapp check --bound nan" -- "$m" check a45.h5 a45.h5 --model abs --bound nan
  probe "mapp check --bound 5 under exact" -- "$m" check a45.h5 a45.h5 --bound 5
  probe "mapp check --model envelope (no envelope)" -- "$m" check a45.h5 a45.h5 --model envelope
  # bless
  probe "mapp bless (no app)" -- "$m" bless
  probe "mapp bless heat (no case)" -- "$m" bless heat
  probe "mapp bless nope" -- "$m" bless nope --size tiny
  probe "mapp bless heat --case ../x" -- "$m" bless heat --size tiny --case ../x
  probe "mapp bless heat --model nope" -- "$m" bless heat --size tiny --model nope
  probe "mapp bless heat --bound -1" -- "$m" bless heat --size tiny --model abs --bound -1
  probe "mapp bless heat over an existing baseline" -- "$m" bless heat --size tiny
  probe "mapp bless heat --model envelope --o0-bin missing" -- "$m" bless heat --size tiny --model envelope --o0-bin /nonexistent
  probe "mapp bless heat --o0-bin without envelope" -- "$m" bless heat --size tiny --o0-bin "$BIN"
  probe "mapp bless heat -n 100000" -- "$m" bless heat --size tiny -n 100000
  probe "mapp bless heat --backend nope" -- "$m" bless heat --size tiny --backend nope
  probe "mapp bless heat -- --rows 0" -- "$m" bless heat --size small --force -- --rows 0
  # plot and report
  for verb in plot report; do
    probe "mapp $verb (nothing)" -- "$m" "$verb"
    probe "mapp $verb missing" -- "$m" "$verb" /nonexistent
    probe "mapp $verb garbage results" -- "$m" "$verb" results-garbage
    probe "mapp $verb empty results" -- "$m" "$verb" results-empty
    probe "mapp $verb torn results" -- "$m" "$verb" results-half
    probe "mapp $verb --reference bad" -- "$m" "$verb" results-empty --reference mpi
    [ "$verb" = report ] && probe "mapp report --format html" -- "$m" report results-empty --format html
  done
  # export and model
  probe "mapp export (nothing)" -- "$m" export
  probe "mapp export without --format" -- "$m" export results-empty --out exported
  probe "mapp export --format cube" -- "$m" export results-empty --format cube --out exported
  probe "mapp export without --out" -- "$m" export results-empty --format caliper-json
  probe "mapp export garbage" -- "$m" export results-garbage --format caliper-json --out exported
  probe "mapp export torn" -- "$m" export results-half --format extrap --out exported
  probe "mapp export extrap of too few rank counts" -- "$m" export results-empty --format extrap --out exported
  probe "mapp export --out /dev/full" -- "$m" export results-empty --format caliper-json --out /dev/full/x
  probe "mapp model missing" -- "$m" model /nonexistent
  probe "mapp model too few rank counts" -- "$m" model results-empty
  probe "mapp model without its venv" -- env MAPP_ANALYSIS_VENV=/nonexistent "$m" model results-empty
  probe "mapp model --fit-max-ranks -1" -- "$m" model results-empty --fit-max-ranks -1
  probe "mapp plot --format gif" -- "$m" plot results-empty --format gif
  probe "mapp plot --format ''" -- "$m" plot results-empty --format ''
  # compare (where this build has it)
  if "$m" --help 2>/dev/null | grep -q '^  compare '; then
    probe "mapp compare (nothing)" -- "$m" compare
    probe "mapp compare one folder" -- "$m" compare results-empty
    probe "mapp compare missing" -- "$m" compare /nonexistent results-empty
    probe "mapp compare garbage" -- "$m" compare results-garbage results-garbage
    probe "mapp compare torn" -- "$m" compare results-half results-half
    probe "mapp compare --threshold -1" -- "$m" compare results-empty results-empty --threshold -1
    probe "mapp compare --alpha 2" -- "$m" compare results-empty results-empty --alpha 2
    probe "mapp compare --junit unwritable" -- "$m" compare results-empty results-empty --junit /nonexistent/c.xml
    probe "mapp compare --junit a folder" -- "$m" compare results-empty results-empty --junit /tmp
    probe "mapp compare --format html" -- "$m" compare results-empty results-empty --format html
  fi
  # submit and collect
  probe "mapp submit (no spec)" -- "$m" submit
  probe "mapp submit (no --env)" -- "$m" submit zero-reps.yaml
  probe "mapp submit --env local" -- "$m" submit "$SOURCE_DIR/harness/tests/data/sweep-heat.yaml" --env "$SOURCE_DIR/envs/local.yaml"
  probe "mapp submit --env missing" -- "$m" submit zero-reps.yaml --env /nonexistent.yaml
  probe "mapp submit broken spec" -- "$m" submit broken.yaml --env "$SOURCE_DIR/envs/slurm-example.yaml" --dry-run
  probe "mapp submit --out with newline" -- "$m" submit "$SOURCE_DIR/harness/tests/data/sweep-heat.yaml" \
    --env "$SOURCE_DIR/envs/slurm-example.yaml" --dry-run --out "$(printf 'a\nb')"
  probe "mapp collect (no folder)" -- "$m" collect
  probe "mapp collect missing" -- "$m" collect /nonexistent
  for d in jobs5 jobsarray jobsgarbage jobsempty jobsnojobs; do probe "mapp collect $d" -- "$m" collect "$d"; done
  probe "mapp collect --junit unwritable" -- "$m" collect jobsnojobs --junit /nonexistent/x.xml
  # selection and dry runs
  local quick=$SOURCE_DIR/harness/sweeps/quick.yaml
  probe "mapp sweep --only nothing" -- "$m" sweep "$quick" --only app=nope --out sweeps
  probe "mapp sweep --only no field" -- "$m" sweep "$quick" --only app --out sweeps
  probe "mapp sweep --only =x" -- "$m" sweep "$quick" --only =x --out sweeps
  probe "mapp sweep --only unknown field" -- "$m" sweep "$quick" --only colour=red --out sweeps
  probe "mapp sweep --exclude everything" -- "$m" sweep "$quick" --exclude app='*' --dry-run
  probe "mapp sweep --dry-run broken spec" -- "$m" sweep broken.yaml --dry-run
  probe "mapp sweep check: maybe" -- "$m" sweep check-maybe.yaml --dry-run
  probe "mapp report --only nothing" -- "$m" report results-empty --only app=nope
  probe "mapp compare --only nothing" -- "$m" compare results-empty results-empty --only app=nope
  # history
  probe "mapp history (no subcommand)" -- "$m" history
  probe "mapp history nope" -- "$m" history nope
  probe "mapp history add (nothing)" -- "$m" history add --db hist.sqlite
  probe "mapp history add missing" -- "$m" history add /nonexistent --db hist.sqlite
  probe "mapp history add garbage" -- "$m" history add results-garbage --db hist.sqlite
  probe "mapp history show not sqlite" -- "$m" history show --db garbage.h5
  probe "mapp history show missing" -- "$m" history show --db /nonexistent/h.sqlite
  probe "mapp history check --format nope" -- "$m" history check --db hist.sqlite --format nope
  probe "mapp history add /dev/full" -- "$m" history add results-empty --db /dev/full/h.sqlite
  probe "mapp history show bad filter" -- "$m" history show --db garbage.h5 colour=red
  probe "mapp history check --threshold -1" -- "$m" history check --threshold -1
  probe "mapp history plot --format gif" -- "$m" history plot --format gif
  probe "mapp history publish (no DIR)" -- "$m" history publish --db hist.sqlite
  probe "mapp history publish missing db" -- "$m" history publish site --db /nonexistent/h.sqlite
  probe "mapp history publish not sqlite" -- "$m" history publish site --db garbage.h5
  probe "mapp history publish into /dev/full" -- "$m" history publish /dev/full/site --db garbage.h5
  probe "mapp history publish --threshold -1" -- "$m" history publish site --threshold -1
  # bisect
  probe "mapp bisect (nothing)" -- "$m" bisect
  probe "mapp bisect (no --spec)" -- "$m" bisect HEAD~1 HEAD
  probe "mapp bisect unknown revision" -- "$m" bisect no-such-rev HEAD --spec zero-reps.yaml --repo "$SOURCE_DIR"
  probe "mapp bisect missing spec" -- "$m" bisect HEAD~1 HEAD --spec /nonexistent.yaml --repo "$SOURCE_DIR"
  probe "mapp bisect --entry 99" -- "$m" bisect HEAD~1 HEAD --spec "$quick" --entry 99 --repo "$SOURCE_DIR"
  # (an entry of its own: the quick spec's entries change)
  printf 'name: b\nruns:\n  - app: heat\n    variants: [mpi]\n    ranks: [1, 2, 4]\n' >three-configurations.yaml
  probe "mapp bisect entry of 3 configurations" -- "$m" bisect HEAD~1 HEAD --spec three-configurations.yaml --entry 0 --repo "$SOURCE_DIR"
  probe "mapp bisect --repetitions 1" -- "$m" bisect HEAD~1 HEAD --spec "$quick" --repetitions 1 --repo "$SOURCE_DIR"
  probe "mapp bisect not a repository" -- "$m" bisect HEAD~1 HEAD --spec "$quick" --repo /tmp
}

# ---------------------------------------------------------------- run
# The peers compile their stencils just in time into the build's
# peers-cache: a probe whose bad value is found only when the answer is
# written (--output /dev/full) would time a cold compile of minutes. Each
# peer runs once first at tiny, so its cache is warm and its probes time
# the refusal; a peer that cannot run here (no venv) is probed as it is.
warm_peer() {
  local exe=$1 t0=$SECONDS
  if timeout 900 "$exe" --size tiny --quiet >/dev/null 2>&1; then
    echo "warmed $(basename "$exe")'s cache (a tiny run, $((SECONDS - t0)) s) before probing it"
  else
    echo "$(basename "$exe") did not run at tiny (exit $?): probed with its cache as it is"
  fi
}
for exe in "$BIN"/mapp-stencil-gt4py "$BIN"/mapp-snapshots-devito; do
  [ -x "$exe" ] && warm_peer "$exe"
done
for exe in "$BIN"/mapp-*; do
  [ -x "$exe" ] || continue
  case $exe in
    *-bench) probe_bench "$exe" ;;
    *) probe_app "$exe" ;;
  esac
done
probe_app_specific
probe_mapp

echo
echo "probed $TOTAL bad inputs over $(ls "$BIN"/mapp* | wc -l) executables of $BUILD/bin and every mapp verb:"
for o in $OUTCOMES; do printf '  %-9s %4d\n' "$o" "${COUNT[$o]}"; done
if [ ${#BAD[@]} -gt 0 ]; then
  echo
  echo "crashed, hung or accepted (${#BAD[@]}):"
  printf '  %s\n' "${BAD[@]}"
  exit 1
fi
echo "none crashed, hung or was accepted"
