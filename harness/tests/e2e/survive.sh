#!/bin/bash
# Issue 29's sweeps that survive real machines, one ctest test per case
# (harness.survive.<case>):
#   timeout  an entry of hours under time_limit: 3 is stopped after about
#            3 s with no process of it left, its record says timeout, the
#            sweep runs the next entry and exits 1 naming it
#   deaf     the same for 2 ranks that ignore SIGTERM (behind mpirun), and
#            for a launcher that ignores SIGTERM and forwards nothing (the
#            app in a session of its own): SIGKILL after the grace period
#            (5 s); every deaf process had started ignoring SIGTERM before
#            the limit
#   retry    a launcher that fails on its first call is launched again and
#            the run passes with 2 attempts recorded; a wrong answer (a
#            perturbed baseline) is not launched again; --resume
#            --retry-failed runs the failed job again and keeps its record
# usage: survive.sh CASE MAPP_H5_TOOL
. "$(dirname "$0")/lib.sh"
CASE=${1:?usage: survive.sh CASE MAPP_H5_TOOL}
TOOL=${2:?usage: survive.sh CASE MAPP_H5_TOOL}
require_app heat
command -v pgrep >/dev/null || { echo "pgrep not found: skipping"; exit 77; }

# env_with_launcher FILE LAUNCHER [ARGS]: this machine's environment with another launcher.
env_with_launcher() {
  sed -e "s|^launcher: .*|launcher: $2|" -e "s|^launcher_args: .*|launcher_args: ${3:-[\"--oversubscribe\"]}|" \
    "$MAPP_SOURCE_DIR/envs/local.yaml" >"$1"
}

# The hangs' time limit: long enough for mpirun to start 2 ranks on a busy
# machine (under a second here; expect_deaf checks they had started), short
# since every hang lasts that long (the deaf launcher 5 s of grace more).
LIMIT=3

# hang_spec FILE NAME RANKS STEPS: an entry of hours (heat tiny, STEPS steps,
# a count no other test uses, so pgrep finds this test's processes alone)
# under time_limit: $LIMIT, then a short one that must still run (under the
# default limit).
hang_spec() {
  cat >"$1" <<YAML
name: $2
check: optional
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [$3]
    sizes: [tiny]
    args: ["--steps", "$4"]
    label: hang
    time_limit: $LIMIT
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1]
    sizes: [tiny]
YAML
}

# last_record FILE EXPR: a Python expression over the last record r.
last_record() { python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print($2)" "$1"; }
# record_of FILE KEY_PART EXPR: the same over the first record whose key holds KEY_PART.
record_of() {
  python3 -c "
import json,sys
for line in open(sys.argv[1]):
    r=json.loads(line)
    if sys.argv[2] in r['key']: print($3); break" "$1" "$2"
}

# expect_stopped NAME RANKS STEPS LIMIT_MAX [ENV]: the hang of hang_spec is
# stopped within LIMIT_MAX seconds, nothing of it is left, and the record
# and the summary say so.
expect_stopped() {
  local name=$1 ranks=$2 steps=$3 most=$4 env=${5:-}
  hang_spec "$name.yaml" "$name" "$ranks" "$steps"
  local start=$SECONDS
  expect_exit 1 "$MAPP" sweep "$name.yaml" --out results ${env:+--env "$env"}
  local took=$((SECONDS - start))
  expect_output "FAIL (timeout after"
  expect_output "failed: heat mpi/serial n=$ranks t=1 tiny strong [hang]: FAIL (timeout"
  expect_output "[2/2] heat mpi/serial n=1 t=1 tiny strong ... ok"
  [ "$took" -le "$most" ] || fail "the sweep took $took s, more than $most s"
  sleep 0.3
  if pgrep -f -- "--steps $steps" >/dev/null; then
    pgrep -af -- "--steps $steps" >&2
    fail "a process of the timed-out run is still there"
  fi
  local f=results/$name/results.jsonl
  [ "$(record_of "$f" "n$ranks" "r['outcome']")" = timeout ] || fail "the record's outcome is not timeout"
  [ "$(record_of "$f" "n$ranks" "r['timeout']['limit_s']")" = "$LIMIT.0" ] || fail "the record's timeout.limit_s is not $LIMIT"
  local elapsed
  elapsed=$(record_of "$f" "n$ranks" "round(r['timeout']['elapsed_s'])")
  echo "ok: $name: stopped after $elapsed s (killed: $(record_of "$f" "n$ranks" "r['timeout']['killed']")), sweep $took s"
}

case_timeout() {
  expect_stopped hang 1 100000001 $((LIMIT + 4))
  # With no time_limit given, the default rule: 3600 s without an earlier
  # run, then 10x the longest earlier run of the configuration, at least
  # 60 s (the first sweep's records, moved aside by the second).
  [ "$(last_record results/hang/results.jsonl "r['time_limit_s']")" = 3600.0 ] || fail "the default limit is not 3600 s without an earlier run"
  expect_exit 0 "$MAPP" sweep hang.yaml --out results --exclude label=hang
  [ "$(last_record results/hang/results.jsonl "r['time_limit_s']")" = 60.0 ] || fail "the default limit is not 60 s after a short earlier run"
  echo "ok: default limits 3600 s, then 60 s from the earlier records"
}

case_deaf() {
  # Ranks that ignore SIGTERM (inherited through exec) behind mpirun. Each
  # leaves deaf.PID holding its command once it ignores SIGTERM.
  cat >ignore-term.sh <<'SH'
#!/bin/sh
trap '' TERM
printf '%s\n' "$*" >"$(dirname "$0")/deaf.$$"
exec "$@"
SH
  cat >deaf-ranks.sh <<'SH'
#!/bin/bash
args=()
for a in "$@"; do case $a in */mapp-*) args+=("$(dirname "$0")/ignore-term.sh" "$a") ;; *) args+=("$a") ;; esac; done
exec mpirun "${args[@]}"
SH
  # A launcher that ignores SIGTERM and forwards nothing: the app (ignoring
  # SIGTERM too) in a session of its own.
  cat >deaf-launcher.sh <<'SH'
#!/bin/bash
trap '' TERM
shift 2
setsid "$(dirname "$0")/ignore-term.sh" "$@" &
wait $!
SH
  chmod +x ignore-term.sh deaf-ranks.sh deaf-launcher.sh
  # expect_deaf N STEPS: N processes of the hang of STEPS steps had started
  # ignoring SIGTERM (the limit's SIGTERM found them deaf, since one that
  # came first would have ended them before they wrote deaf.PID).
  expect_deaf() {
    local n
    n=$({ grep -l -- "--steps $2" deaf.* 2>/dev/null || true; } | wc -l)
    [ "$n" = "$1" ] || fail "$n deaf processes of the hang had started, expected $1"
  }
  env_with_launcher ranks.yaml "$PWD/deaf-ranks.sh"
  expect_stopped deafranks 2 100000002 $((LIMIT + 7)) ranks.yaml
  expect_deaf 2 100000002
  env_with_launcher launcher.yaml "$PWD/deaf-launcher.sh" "[]"
  expect_stopped deaflauncher 1 100000003 $((LIMIT + 9)) launcher.yaml
  expect_deaf 1 100000003
  [ "$(record_of results/deaflauncher/results.jsonl n1 "r['timeout']['killed']")" = True ] ||
    fail "the deaf launcher was not killed after the grace period"
}

case_retry() {
  # Fails on its first call, as a launcher that could not start would.
  cat >flaky.sh <<SH
#!/bin/bash
if [ ! -e "$PWD/flaky.called" ]; then touch "$PWD/flaky.called"; echo "flaky: no slots today" >&2; exit 1; fi
exec mpirun "\$@"
SH
  chmod +x flaky.sh
  env_with_launcher flaky.yaml "$PWD/flaky.sh"
  heat_spec retry.yaml retry 1
  printf 'check: required\nretries: 2\n' >>retry.yaml
  expect_exit 0 "$MAPP" sweep retry.yaml --out results --env flaky.yaml
  expect_output "launching again (retry 1 of 2)"
  expect_output "ok"
  [ "$(last_record results/retry/results.jsonl "len(r['attempts'])")" = 2 ] || fail "not 2 attempts recorded"
  [ "$(last_record results/retry/results.jsonl "r['attempts'][0]['exit_code']")" = 1 ] || fail "the first attempt's exit is not 1"
  ls results/retry/runs/*.attempt1.log >/dev/null || fail "the first attempt's log was not kept"
  expect_exit 0 "$MAPP" report results/retry
  grep -qF "1 of 1 launched more than once (retries); 1 flaky configuration (passed only after a retry): heat mpi/serial tiny strong n1 t1;" \
    results/retry/report.md || fail "the report does not count the flaky configuration"
  echo "ok: the flaky launcher passed on attempt 2, and the report counts it flaky"

  # A wrong answer is not launched again.
  mkdir -p base && cp -r "$MAPP_SOURCE_DIR/baselines/heat" base/
  "$TOOL" perturb base/heat/tiny.h5 temperature 5 1e-3 || fail "perturbing the baseline"
  rm -f flaky.called
  MAPP_BASELINE_DIR=$PWD/base expect_exit 1 "$MAPP" sweep retry.yaml --out results --env flaky.yaml
  expect_output "FAIL (baseline)"
  [ "$(last_record results/retry/results.jsonl "len(r['attempts'])")" = 2 ] ||
    fail "expected 2 attempts: the flaky launch, then the wrong answer, not retried"
  [ "$(last_record results/retry/results.jsonl "r['attempts'][1]['outcome']")" = baseline ] || fail "the wrong answer was retried"
  echo "ok: the wrong answer was not launched again"

  # --resume --retry-failed runs the failed job again, its record kept aside.
  expect_exit 0 "$MAPP" sweep retry.yaml --out results --env flaky.yaml --resume --retry-failed
  expect_output "--retry-failed: 1 failed run to run again"
  [ "$(wc -l <results/retry/results.jsonl)" = 1 ] || fail "results.jsonl does not hold the one new record"
  [ "$(last_record results/retry/results.jsonl "r['outcome']")" = ok ] || fail "the retried run did not pass"
  cat results/retry/results-retried-*.jsonl | grep -q '"outcome":"baseline"' || fail "the failed record was not kept aside"
  expect_exit 2 "$MAPP" sweep retry.yaml --out results --retry-failed
  expect_output "needs --resume"
  echo "ok: --resume --retry-failed"
}

"case_$CASE"
