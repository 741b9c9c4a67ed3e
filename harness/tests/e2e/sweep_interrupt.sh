#!/bin/bash
# A sweep killed mid-way keeps every record it finished, each a whole line;
# --resume repairs a torn last line and completes the sweep without
# duplicating a job.
. "$(dirname "$0")/lib.sh"
require_app heat
cat >long.yaml <<'YAML'
name: long
repetitions: 4
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1, 2]
    sizes: [tiny]
YAML
R=results/long

# Interrupt once two records are in (of 8), as a user's Ctrl-C or a
# scheduler's time limit would: SIGTERM to mapp, which passes it on.
"$MAPP" sweep long.yaml --out results >progress.txt 2>&1 &
SWEEP=$!
for _ in $(seq 600); do
  [ "$(count_lines $R/results.jsonl 2>/dev/null || echo 0)" -ge 2 ] && break
  sleep 0.1
done
kill -TERM $SWEEP
code=0
wait $SWEEP || code=$?
[ "$code" = 143 ] || { cat progress.txt; fail "the sweep did not die of SIGTERM (exit $code)"; }
N=$(count_lines $R/results.jsonl)
[ "$N" -ge 1 ] && [ "$N" -lt 8 ] || fail "expected some but not all 8 records, got $N"
[ -z "$(tail -c1 $R/results.jsonl)" ] || fail "last record is not a whole line"
[ "$(grep -vc '^{.*}$' $R/results.jsonl || true)" = 0 ] || fail "a line is not a whole record"
# mapp waits for its launch to stop before it dies: nothing may be left running
pgrep -f "results/long/runs" >/dev/null && fail "the interrupted sweep left its launch running"

# a torn write, as if killed inside the append
printf '{"app":"heat","vari' >>$R/results.jsonl
expect_exit 0 "$MAPP" sweep long.yaml --out results --resume
expect_output "dropped an incomplete last record"
expect_output "$N already done"
[ "$(count_lines $R/results.jsonl)" = 8 ] || fail "resume did not complete 8 records"
UNIQUE=$(sed -E 's/.*"ranks":([0-9]+).*"repetition":([0-9]+).*/\1-\2/' $R/results.jsonl | sort -u | wc -l)
[ "$UNIQUE" = 8 ] || fail "resume duplicated a job: $UNIQUE distinct of 8"
expect_exit 0 "$MAPP" report $R
echo "sweep interrupt: ok"
