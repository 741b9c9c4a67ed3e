#!/usr/bin/env bash
# GPU acceptance in one call (issue 21). On the GPU machine, from a bundle
# built by ci/gpu-bundle.sh:
#
#   bash .gpu/env.sh ci/gpu-acceptance.sh                 # results/gpu/acceptance.{md,json}
#   bash .gpu/env.sh ci/gpu-acceptance.sh --cpu-dry-run   # the same pipeline on the CPU backends
#
# It runs every `cuda`-labelled ctest test (the bundle's ctest/*.sh), each
# app's cuda backend on its baseline case checked with `mapp check` against
# the CPU baseline, and each app's CUDA benchmark rows, and writes a table
# of the GPU goals (ci/gpu/goals.txt) with their measured values and the
# device's provenance. --cpu-dry-run (or MAPP_GPU_ACCEPTANCE_CPU=1) runs the
# same steps with CPU backends and CPU bench rows, so the checking, table
# and JSON are exercised without a GPU; its report says "cpu stand-in" and
# claims no GPU figure.
#
# Options: --out DIR (default results/gpu), --budget SECONDS (default 450:
# every step has a timeout and the whole run stops within 8 minutes),
# --bench-reserve SECONDS (default 210: what the answers and the cuda tests
# leave to the benches; a test that does not fit is reported "not run"),
# --probe (only say whether a GPU is here: exit 0, or 77 as below).
# Exit: 0 every answer right (a missed speed goal, and a cuda test left
# unrun for want of time, are reported, not fatal); 1 a wrong answer, a
# failed or timed-out cuda test, or a goal's bench row that skipped with an
# error (its goal says "failed", never a ratio of its zero time); 2 bad
# usage; 77 no GPU here (one line; nothing written).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=gpu-acceptance.sh
cpu=${MAPP_GPU_ACCEPTANCE_CPU:-0}
out=results/gpu
budget=450
bench_reserve=210 # seconds the answers and tests leave to the benches
probe_only=0

die() { echo "$prog: $*" >&2; exit 2; }

parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --cpu-dry-run) cpu=1 ;;
      --probe) probe_only=1 ;;
      --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift ;;
      --budget) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--budget needs whole seconds"; budget=$2; shift ;;
      --bench-reserve) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--bench-reserve needs whole seconds"; bench_reserve=$2; shift ;;
      -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      *) die "unknown argument '$1' (--cpu-dry-run, --out DIR, --budget SECONDS, --bench-reserve SECONDS, --probe)" ;;
    esac
    shift
  done
  [ "$cpu" = 0 ] || [ "$cpu" = 1 ] || die "MAPP_GPU_ACCEPTANCE_CPU must be 0 or 1, got '$cpu'"
}

# The programs and sources: the bundle's (env.sh sets MAPP_BIN_DIR and
# MAPP_SOURCE_DIR), else a build tree's.
locate() {
  bin=${MAPP_BIN_DIR:-}
  [ -n "$bin" ] && [ -x "$bin/mapp" ] || die "no mapp programs: run through .gpu/env.sh (or set MAPP_BIN_DIR)"
  src=${MAPP_SOURCE_DIR:-$(cd "$here/.." && pwd)}
  [ -d "$src/baselines" ] || die "no baselines under $src (set MAPP_SOURCE_DIR)"
}

# ---------------------------------------------------------------- the device

# mapp-gpu-info: packed by the bundle; elsewhere compiled into a scratch
# folder when nvcc is there (nothing is written before the device is known).
device_probe() {
  if [ -x "$bin/mapp-gpu-info" ]; then echo "$bin/mapp-gpu-info"; return; fi
  command -v nvcc >/dev/null || return 0
  nvcc -O2 -o "$probe_scratch/mapp-gpu-info" "$here/gpu/device-info.cu" 2>/dev/null && echo "$probe_scratch/mapp-gpu-info"
}

# Exits 77 with one line where there is no GPU; fills the provenance.
require_device() {
  local probe info rc
  probe_scratch=$(mktemp -d) || die "mktemp failed"
  trap 'rm -rf "$probe_scratch"' EXIT
  probe=$(device_probe)
  [ -n "$probe" ] || { echo "$prog: no GPU here (no CUDA toolkit to probe one): skipped; --cpu-dry-run runs the CPU stand-in" >&2; exit 77; }
  info=$("$probe" 2>&1)
  rc=$?
  if [ $rc -eq 77 ]; then
    local why=${info#*here (}
    echo "$prog: no GPU here (${why%)}): skipped; --cpu-dry-run runs the CPU stand-in" >&2
    exit 77
  fi
  [ $rc -eq 0 ] || { echo "$prog: the device probe failed: $info" >&2; exit 1; }
  dev_name=$(sed -n 's/^name=//p' <<<"$info")
  dev_sms=$(sed -n 's/^sm_count=//p' <<<"$info")
  dev_cc=$(sed -n 's/^compute_capability=//p' <<<"$info")
  dev_cuda=$(sed -n 's/^runtime_cuda=//p' <<<"$info")
  dev_driver_cuda=$(sed -n 's/^driver_cuda=//p' <<<"$info")
  dev_driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)
  local smi_name
  smi_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
  [ -n "$smi_name" ] && dev_name=$smi_name
  dev_driver=${dev_driver:-unknown (no nvidia-smi)}
  dev_count=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
}

describe_host() {
  dev_name="cpu stand-in: $(hostname), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo 2>/dev/null), $(nproc) cores"
  dev_sms="-" dev_cc="-" dev_cuda="-" dev_driver="-" dev_driver_cuda="-" dev_count=0
}

# ---------------------------------------------------------------- time

# Seconds a step may take: what it asks for, within what is left before
# step_deadline (the budget's end, or earlier to keep time for the benches).
step_limit() {
  local left=$((step_deadline - SECONDS))
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}

# run_step NAME SECONDS CMD...: the command's output in logs/NAME.log; its
# exit status, 124 for a timeout of its own SECONDS, 125 when the budget had
# no time left to start it, 126 when the budget cut it short.
run_step() {
  local name=$1 wanted=$2 limit rc
  limit=$(step_limit "$wanted")
  shift 2
  if [ "$limit" -lt 5 ]; then
    echo "not run: out of time (the ${budget} s budget, ${bench_reserve} s of it kept for the benches)" >"$work/logs/$name.log"
    return 125
  fi
  timeout -k 5 "$limit" "$@" >"$work/logs/$name.log" 2>&1
  rc=$?
  [ $rc -eq 124 ] && [ "$limit" -lt "$wanted" ] && return 126
  return $rc
}

# What a step's exit status says, for the report.
step_failure() {
  case $1 in
    124) echo "failed: $2 timed out" ;;
    125) echo "not run: out of time" ;;
    126) echo "not finished: the budget cut $2 short" ;;
    *) echo "wrong: $2 exited $1" ;;
  esac
}

# ---------------------------------------------------------------- records

json_string() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/ }
  printf '"%s"' "${s//$'\n'/ }"
}

# One line per row in the TSV files the report is written from.
record() { local file=$1; shift; (IFS=$'\t'; echo "$*") >>"$work/$file"; }

# ---------------------------------------------------------------- cuda tests

# The bundle's cuda-labelled ctest tests, this machine's paths filled in:
# 0 passed, 77 skipped (no GPU), anything else failed.
run_cuda_tests() {
  local tests=${MAPP_BUNDLE:-}/ctest
  [ -d "$tests" ] || { record tests.tsv "(none)" "not run" "-" "no bundle ctest/ folder: run through .gpu/env.sh"; return; }
  local script name limit rc t0 verdict
  for script in "$tests"/*.sh; do
    name=$(basename "$script" .sh)
    limit=$(sed -n 's/^# MAPP_TEST_TIMEOUT=//p' "$script")
    mkdir -p "$work/ctest"
    sed -e "s#@BIN@#$bin#g" -e "s#@SRC@#$src#g" -e "s#@WORK@#$work/ctest-work#g" "$script" >"$work/ctest/$name.sh"
    t0=$SECONDS
    run_step "test-$name" "${limit:-120}" bash "$work/ctest/$name.sh"
    rc=$?
    case $rc in
      0) verdict=passed ;;
      77) verdict=skipped ;;
      125 | 126) verdict=$(step_failure "$rc" "the test"); not_run=$((not_run + 1)) ;;
      *) verdict=$(step_failure "$rc" "the test"); failures=$((failures + 1)) ;;
    esac
    record tests.tsv "$name" "$verdict" "$((SECONDS - t0))" "logs/test-$name.log"
  done
}

# ---------------------------------------------------------------- answers

# check_answer APP LABEL MODEL WHY CMD...: runs CMD (which writes
# answers/LABEL.h5), then mapp check against the app's tiny baseline with the
# baseline's own tolerance model (MODEL only names it for the report).
check_answer() {
  local app=$1 label=$2 model=$3 why=$4 rc verdict
  shift 4
  run_step "run-$label" 120 "$@" --output "$work/answers/$label.h5" --result "$work/answers/$label.json"
  rc=$?
  if [ $rc -ne 0 ]; then
    verdict=$(step_failure "$rc" "the run")
  else
    run_step "check-$label" 60 "$bin/mapp" check "$src/baselines/$app/tiny.h5" "$work/answers/$label.h5"
    rc=$?
    verdict=$([ $rc -eq 0 ] && echo pass || step_failure "$rc" "mapp check")
    verdict="$verdict ($(tail -n1 "$work/logs/check-$label.log"))"
  fi
  [ $rc -eq 0 ] || failures=$((failures + 1))
  record answers.tsv "$app" "$label" "$*" "$model" "$why" "$verdict"
}

run_answers() {
  mkdir -p "$work/answers"
  local be=cuda stencil_be=cuda layers=(--layers disk-host-device --device-budget 4MiB --host-budget 3MiB)
  if [ "$cpu" = 1 ]; then be=serial stencil_be=serial layers=(--layers disk-host --host-budget 3MiB); fi
  local envelope="envelope (the baseline's: 2 x the widest of the -O3 and FMA members' distance from -O0)"
  local why_crm="FMA contraction and cuFFT's order of operations change round-off; the envelope bounds what a correct build may change"
  local why_exact="compiled --fmad=false with the loop bodies the CPU runs (written once), only correctly rounded + - * /, in the CPU's order"
  for v in batched percrm; do
    check_answer crm "crm-$v-$be" "$envelope" "$why_crm" "$bin/mapp-crm" --backend "$be" --variant "$v" --size tiny
  done
  check_answer stencil "stencil-build-and-run-$stencil_be" exact "$why_exact (the generated program: -fmad=false)" \
    "$bin/mapp-stencil" --backend "$stencil_be" --variant build-and-run --size tiny --cache "$work/stencil-cache"
  local sg_variants=(eager subgraph)
  [ "$cpu" = 1 ] || sg_variants+=(cuda-graph) # eager and subgraph through the runtime's CUDA streams, and one captured graph
  for v in "${sg_variants[@]}"; do
    check_answer subgraph "subgraph-$v-$be" exact "$why_exact" "$bin/mapp-subgraph" --backend "$be" --variant "$v" --size tiny
  done
  check_answer snapshots "snapshots-memory-$be" exact "$why_exact (snap_kernel.h)" \
    "$bin/mapp-snapshots" --backend "$be" --variant memory --size tiny
  check_answer snapshots "snapshots-stream-$be" exact "$why_exact (snap_kernel.h); every layer moves snapshots bit for bit" \
    "$bin/mapp-snapshots" --backend "$be" --variant stream --size tiny "${layers[@]}" --disk-dir "$work/answers"
}

# ---------------------------------------------------------------- benchmarks

# The rows goals.txt names for APP in this mode, as a benchmark filter.
bench_filter() {
  local app=$1
  awk -F'|' -v app="$app" -v cpu="$cpu" '!/^#/ && NF >= 12 && $2 == app {
      a = cpu ? $9 : $6; b = cpu ? $10 : $7
      if (a != "-") rows[a] = 1
      if (b != "-") rows[b] = 1
    }
    END { s = ""; for (r in rows) s = s (s == "" ? "" : "|") r; print s }' "$here/gpu/goals.txt"
}

run_bench() {
  local app=$1 limit=$2 rows reps=3 min_time=0.5
  rows=$(bench_filter "$app")
  [ -n "$rows" ] || return 0
  [ "$cpu" = 1 ] && reps=1 min_time=0.05
  run_step "bench-$app" "$limit" "$bin/mapp-$app-bench" "--benchmark_filter=^($rows)(/real_time)?\$" \
    --benchmark_repetitions=$reps --benchmark_report_aggregates_only=true --benchmark_min_time=$min_time \
    --benchmark_out="$work/bench-$app.json" --benchmark_out_format=json
  local rc=$?
  [ -f "$work/bench-$app.json" ] && awk -f "$here/gpu/bench-metrics.awk" "$work/bench-$app.json" >>"$work/metrics.tsv"
  record benches.tsv "$app" "$rc" "logs/bench-$app.log"
}

run_benches() {
  : >"$work/metrics.tsv"
  # The CPU stand-in's snapshots problem is smaller (this machine is small).
  [ "$cpu" = 1 ] && export MAPP_SNAP_BENCH_NX=200 MAPP_SNAP_BENCH_NZ=60 MAPP_SNAP_BENCH_NT=300
  run_bench subgraph 60
  run_bench crm 120
  run_bench snapshots 120
  run_bench stencil 150
}

# metric ROW KEY: the value, or nothing where the row did not run or
# skipped with an error (its zero time must not become a ratio).
metric() {
  row_failed "$1" && return 0
  awk -F'\t' -v r="$1" -v k="$2" '$1 == r && $2 == k { print $3; exit }' "$work/metrics.tsv"
}
row_failed() { awk -F'\t' -v r="$1" '$1 == r && $2 == "error" { found = 1 } END { exit !found }' "$work/metrics.tsv"; }

# One goal line of goals.txt, evaluated: appended to goals.tsv.
evaluate_goal() {
  local id app what kind m a b cm ca cb op goal row
  IFS='|' read -r id app what kind m a b cm ca cb op goal <<<"$1"
  [ "$cpu" = 1 ] && m=$cm a=$ca b=$cb
  local va vb value status
  [ "$a" = - ] || va=$(metric "$a" "$m")
  [ "$b" = - ] || vb=$(metric "$b" "$m")
  value=$(awk -v kind="$kind" -v a="${va:-}" -v b="${vb:-}" 'BEGIN {
      if (a == "" || (kind != "value" && b == "")) exit
      if (kind == "value") v = a; else if (kind == "faster") v = b / a; else v = a / b
      printf "%.4g", v }')
  local broken=
  for row in "$a" "$b"; do [ "$row" != - ] && row_failed "$row" && broken="$broken $row"; done
  if [ "$a" = - ]; then status="n/a: no stand-in"
  elif [ -n "$broken" ]; then
    status="failed:$broken skipped with an error (see logs/bench-$app.log)"
    failures=$((failures + 1))
  elif [ "$cpu" = 1 ]; then status="cpu stand-in"
  elif [ "$op" = report ]; then status=reported
  else status=$(awk -v v="$value" -v op="$op" -v g="$goal" 'BEGIN { print (op == ">=" ? v >= g : v <= g) ? "pass" : "missed" }')
  fi
  local rows=$a
  [ "$b" = - ] || rows="$a vs $b"
  record goals.tsv "$id" "$app" "$what" "$m" "${value:--}" "$op" "$goal" "$status" "$rows"
}

evaluate_goals() {
  local line
  while IFS= read -r line; do
    [[ $line == \#* || -z $line ]] && continue
    evaluate_goal "$line"
  done <"$here/gpu/goals.txt"
}

# ---------------------------------------------------------------- crm async

# record_row RECORD NAME COMMAND FIELD...: a TSV row of the record's last
# line: NAME, COMMAND, each dotted FIELD to 4 significant digits, "ok".
record_row() {
  python3 - "$@" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
values = []
for path in sys.argv[4:]:
    at = r
    for key in path.split("."):
        at = at.get(key) if isinstance(at, dict) else None
    values.append("-" if at is None else "%.4g" % at)  # a field the row's mode does not have
print("\t".join(sys.argv[2:4] + values + ["ok"]))
PY
}


# The CAAR report's asynchronous configuration: one rank, 133 large CRMs
# (its ~800 a node over 6 GPUs), every launch on one stream against --sync,
# with the device scratch from one pool or allocated per phase (OpenACC's
# `enter data create`), and the state in managed memory. Each row's
# column-steps/s, launches and host synchronisations per CRM step, from
# its record. cuda only: the CPU stand-in records why it has none.
run_crm_async() {
  local name args rc json
  if [ "$cpu" = 1 ]; then record crm_async.tsv "(none)" "-" "-" "-" "-" "cuda only: not run on the CPU stand-in"; return; fi
  mkdir -p "$work/crm-async"
  for name in pool-async pool-sync per-phase-async per-phase-sync managed-async; do
    args=(--backend cuda --size large --instances 133 --steps 2)
    case $name in
      *-sync) args+=(--sync) ;;
    esac
    case $name in
      per-phase-*) args+=(--alloc per-phase) ;;
      managed-*) args+=(--memory managed) ;;
    esac
    json=$work/crm-async/$name.json
    run_step "crm-async-$name" 120 "$bin/mapp-crm" "${args[@]}" --min-time 1 --result "$json"
    rc=$?
    if [ $rc -ne 0 ]; then
      record crm_async.tsv "$name" "${args[*]}" "-" "-" "-" "$(step_failure "$rc" "the run")"
      failures=$((failures + 1))
      continue
    fi
    record_row "$json" "$name" "${args[*]}" fom.value app_data.launches_per_crm_step app_data.host_syncs_per_crm_step \
      >>"$work/crm_async.tsv"
  done
}

# The node-equivalent ratio and ranks per GPU (harness/sweeps/crm-node.yaml
# as this node can run it within the budget): 760 large CRMs on all the
# node's cores (every rank a core, or one rank of every core's thread: the
# better stands for the CPU) and on its GPU with 1, 2, 4, 6 and 8 ranks
# sharing it, each with --host-work-us 100 (the rest of the model on the
# host). The ratio is the best GPU row over the CPU's, on this node; the
# node's cores over its GPUs is what shares one GPU (Summit: 7).
run_crm_node() {
  local cores name json rc args mpiexec
  cores=$(nproc)
  mpiexec=$(command -v mpirun || echo "$bin/mpirun")
  mkdir -p "$work/crm-node"
  local common=(--size large --instances 760 --steps 1 --host-work-us 100 --min-time 1) names=(cpu-ranks cpu-threads)
  # the CPU stand-in runs the CPU side, and its ratio says the GPU side is missing
  if [ "$cpu" = 1 ]; then common=(--size large --instances 76 --steps 1 --host-work-us 100); else names+=(gpu-1 gpu-2 gpu-4 gpu-6 gpu-8); fi
  for name in "${names[@]}"; do
    case $name in
      cpu-ranks) args=("$mpiexec" --oversubscribe -np "$cores" "$bin/mapp-crm" --backend omp --threads 1) ;;
      cpu-threads) args=("$bin/mapp-crm" --backend omp --threads "$cores") ;;
      gpu-*) args=("$mpiexec" --oversubscribe -np "${name#gpu-}" "$bin/mapp-crm" --backend cuda) ;;
    esac
    json=$work/crm-node/$name.json
    run_step "crm-node-$name" 120 "${args[@]}" "${common[@]}" --result "$json"
    rc=$?
    if [ $rc -ne 0 ]; then
      record crm_node.tsv "$name" "${args[*]}" "-" "-" "$(step_failure "$rc" "the run")"
      failures=$((failures + 1))
      continue
    fi
    record_row "$json" "$name" "${args[*]##*/}" fom.value app_data.sypd >>"$work/crm_node.tsv"
  done
  awk -F'\t' -v cores="$cores" -v gpus="$dev_count" '
    $5 == "ok" && $1 ~ /^cpu/ && $3 > cpu { cpu = $3; c = $1 }
    $5 == "ok" && $1 ~ /^gpu/ && $3 > gpu { gpu = $3; g = $1 }
    END { if (cpu && gpu) printf "ratio\t%s over %s, %s cores a GPU\t%.3g\t-\tnode-equivalent (the report: 8.1x, 7 cores a GPU)\n", g, c, cores / (gpus ? gpus : 1), gpu / cpu
          else printf "ratio\t-\t-\t-\tmissing: a side did not run\n" }' "$work/crm_node.tsv" >>"$work/crm_node.tsv"
}

# ---------------------------------------------------------------- subgraph async

# The seed's asynchronous effects on the GPU: a chain of tasks (no_comm,
# width 1, graph-steps 64) through the runtime's CUDA streams, eager and
# replayed without (--stream-ordered none) and with runahead (all), beside
# the captured CUDA graph, at a short and a long kernel. Each row's ns per
# task, the host's issue time per op and the notifications per replay. The
# CPU stand-in runs the emulated device (serial backend; no cuda-graph).
run_subgraph_async() {
  local name k args rc json be=(--backend cuda)
  [ "$cpu" = 1 ] && be=(--backend serial --device emulated)
  mkdir -p "$work/subgraph-async"
  for k in 100 3000; do
    for name in eager replay-none replay-all cuda-graph; do
      [ "$cpu" = 1 ] && [ "$name" = cuda-graph ] && continue
      args=("${be[@]}" --pattern no_comm --width 1 --steps 4096 --graph-steps 64 --iterations "$k")
      case $name in
        eager) args+=(--variant eager) ;;
        replay-none) args+=(--variant subgraph --stream-ordered none) ;;
        replay-all) args+=(--variant subgraph --stream-ordered all) ;;
        cuda-graph) args+=(--variant cuda-graph) ;;
      esac
      json=$work/subgraph-async/$name-k$k.json
      run_step "subgraph-async-$name-k$k" 60 "$bin/mapp-subgraph" "${args[@]}" --result "$json"
      rc=$?
      if [ $rc -ne 0 ]; then
        record subgraph_async.tsv "$name K=$k" "${args[*]}" "-" "-" "-" "$(step_failure "$rc" "the run")"
        failures=$((failures + 1))
        continue
      fi
      record_row "$json" "$name K=$k" "${args[*]}" app_data.ns_per_task app_data.issue_us_per_op \
        app_data.notifications_per_step >>"$work/subgraph_async.tsv"
    done
  done
}

# ---------------------------------------------------------------- report

write_markdown() {
  local f=$out/acceptance.md mode="GPU"
  [ "$cpu" = 1 ] && mode="cpu stand-in (--cpu-dry-run): no GPU figure below"
  {
    echo "# GPU acceptance ($mode)"
    echo
    echo "Run $(date -u +%Y-%m-%dT%H:%M:%SZ), revision $revision, ${SECONDS} s of a ${budget} s budget, exit $exit_code:" \
      "$failures wrong answer(s) or failed test(s), $not_run test(s) not run for want of time."
    echo
    echo "| device | SMs | compute capability | driver | CUDA (driver / runtime) |"
    echo "|---|---|---|---|---|"
    echo "| $dev_name | $dev_sms | $dev_cc | $dev_driver | $dev_driver_cuda / $dev_cuda |"
    echo
    echo "## Goals"
    echo
    echo "| goal | metric | measured | goal | status | rows |"
    echo "|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %s %s | %s | `%s` |\n", $3, $4, $5, $6, $7, $8, $9 }' "$work/goals.tsv"
    echo
    echo "## Answers (each app's $([ "$cpu" = 1 ] && echo "CPU" || echo cuda) backend on its baseline case, \`mapp check\` against baselines/APP/tiny.h5)"
    echo
    echo "| app | run | checked with | why | result |"
    echo "|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | `%s` | %s | %s | %s |\n", $1, $3, $4, $5, $6 }' "$work/answers.tsv"
    echo
    echo "## crm: the report's asynchronous configuration (1 rank, 133 large CRMs)"
    echo
    echo "| configuration | flags | column-steps/s | launches / CRM step | host syncs / CRM step | result |"
    echo "|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | `%s` | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$work/crm_async.tsv"
    echo
    echo "## crm: the node-equivalent ratio and ranks per GPU (760 large CRMs, 76 on the CPU stand-in; --host-work-us 100)"
    echo
    echo "| run | command | column-steps/s | SYPD (ne30/64, CRM only) | result |"
    echo "|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | `%s` | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$work/crm_node.tsv"
    echo
    echo "## subgraph: asynchronous effects (a chain of tasks, no_comm width 1, graph-steps 64)"
    echo
    echo "| run | flags | ns per task | host issue us per op | notifications per replay | result |"
    echo "|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | `%s` | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$work/subgraph_async.tsv"
    echo
    echo "## cuda-labelled ctest tests"
    echo
    echo "| test | result | seconds |"
    echo "|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s |\n", $1, $2, $3 }' "$work/tests.tsv"
    echo
    echo "Logs, answers and the benches' JSON: \`$work\`."
  } >"$f"
}

# tsv_to_json FILE KEY...: the rows of FILE as an array of objects.
tsv_to_json() {
  local file=$1 first=1 i
  shift
  local keys=("$@")
  printf '['
  while IFS=$'\t' read -r -a cols; do
    [ $first = 1 ] || printf ','
    first=0
    printf '{'
    for ((i = 0; i < ${#keys[@]}; i++)); do
      [ $i = 0 ] || printf ','
      printf '"%s":%s' "${keys[$i]}" "$(json_string "${cols[$i]:-}")"
    done
    printf '}'
  done <"$file"
  printf ']'
}

write_json() {
  {
    printf '{"schema":"mapp-gpu-acceptance/1","mode":%s,' "$(json_string "$([ "$cpu" = 1 ] && echo "cpu stand-in" || echo gpu)")"
    printf '"time":%s,"revision":%s,"seconds":%d,"budget_s":%d,"exit_code":%d,' \
      "$(json_string "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$(json_string "$revision")" "$SECONDS" "$budget" "$exit_code"
    printf '"device":{"name":%s,"sm_count":%s,"compute_capability":%s,"driver":%s,"driver_cuda":%s,"runtime_cuda":%s},' \
      "$(json_string "$dev_name")" "$(json_string "$dev_sms")" "$(json_string "$dev_cc")" "$(json_string "$dev_driver")" \
      "$(json_string "$dev_driver_cuda")" "$(json_string "$dev_cuda")"
    printf '"goals":%s,' "$(tsv_to_json "$work/goals.tsv" id app what metric value op goal status rows)"
    printf '"answers":%s,' "$(tsv_to_json "$work/answers.tsv" app label command model why result)"
    printf '"crm_node":%s,' "$(tsv_to_json "$work/crm_node.tsv" run command fom sypd result)"
    printf '"crm_async":%s,' "$(tsv_to_json "$work/crm_async.tsv" configuration flags fom launches_per_crm_step host_syncs_per_crm_step result)"
    printf '"subgraph_async":%s,' "$(tsv_to_json "$work/subgraph_async.tsv" run flags ns_per_task issue_us_per_op notifications_per_step result)"
    printf '"tests":%s}\n' "$(tsv_to_json "$work/tests.tsv" name result seconds log)"
  } >"$out/acceptance.json"
}

# ---------------------------------------------------------------- main

main() {
  parse_args "$@"
  # the device first: without a GPU the answer is 77, bundle or not
  bin=${MAPP_BIN_DIR:-}
  if [ "$cpu" = 0 ]; then require_device; fi
  locate
  if [ "$cpu" = 1 ]; then describe_host; fi
  if [ "$probe_only" = 1 ]; then echo "$dev_name, $dev_sms SMs"; exit 0; fi
  mkdir -p "$out" || die "cannot create $out"
  out=$(cd "$out" && pwd)
  work=$out/work
  rm -rf "$work"
  mkdir -p "$work/logs"
  deadline=$((SECONDS + budget))
  [ "$bench_reserve" -lt "$budget" ] || die "--bench-reserve ($bench_reserve s) leaves nothing of --budget ($budget s)"
  revision=$("$bin/mapp" --help 2>/dev/null | sed -n 's/.*(revision \([^)]*\)).*/\1/p')
  failures=0
  : >"$work/answers.tsv"
  : >"$work/tests.tsv"
  : >"$work/goals.tsv"
  : >"$work/crm_async.tsv"
  : >"$work/crm_node.tsv"
  : >"$work/subgraph_async.tsv"
  not_run=0
  step_deadline=$((deadline - bench_reserve))
  run_answers
  run_cuda_tests
  step_deadline=$deadline
  run_benches
  run_crm_async
  run_crm_node
  run_subgraph_async
  evaluate_goals
  exit_code=$([ $failures -eq 0 ] && echo 0 || echo 1)
  write_markdown
  write_json
  echo "$prog: $out/acceptance.md: $failures wrong answer(s) or failed test(s), $not_run test(s) not run (out of time); goals: $(cut -f8 "$work/goals.tsv" | sort | uniq -c | awk '{ $1 = $1 " x"; print }' | paste -sd, -)"
  exit "$exit_code"
}

main "$@"
