#!/usr/bin/env bash
# records.sh CASE WORKDIR: what crm's record says for the CAAR report's
# figures (issue 51), from real runs. Needs MAPP_BIN_DIR, the answers
# helpers and mpirun.
#   sypd       the record's sypd is dt x F / (columns a node x nx) / 365
#              with F the run's column-steps/s over its nodes, at
#              --sypd-at's 54 N^2 + 2 columns over the nodes, labelled CRM
#              only; 2 ranks on this node count as one node
#   host_work  --host-work-us X spins at least X us per CRM per global step
#              on each rank (host_work_s) and leaves the answer bit for bit
#   caar_2d    the caar-2d preset is the report's 8 x 1 x 28 CRMs on ne4's
#              866 columns, and --chunk 16 (E3SM's PCOLS) gives its answer
#              bit for bit
set -u
case_name=$1
work=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# record FILE PYTHON-EXPRESSION: the expression over the last record r
# (app_data as d) must be true; prints it and the record's values when not.
record() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
d = r["app_data"]
if not eval(sys.argv[2]):
    print("not true:", sys.argv[2])
    print("app_data:", json.dumps(d))
    print("problem:", json.dumps(r["problem"]), "fom:", r["fom"]["value"], "compute:", r["phases"]["compute"])
    sys.exit(1)
EOF
}

sypd_case() {
  local ranks at columns
  for ranks in 1 2; do
    for at in ne30/64:48602/64 ne120/1024:777602/1024; do
      columns=${at#*:}
      at=${at%%:*}
      run "$ranks" --size tiny --dt 10 --sypd-at "$at" --result "r$ranks.json" || fail "$ranks ranks at $at: exit $?"
      record "r$ranks.json" "d['sypd_at'] == '$at' and abs(d['sypd_columns_per_node'] - $columns) < 1e-9" ||
        fail "$ranks ranks: --sypd-at $at's columns a node"
      record "r$ranks.json" "d['sypd_nodes'] == 1 and d['sypd_scope'].startswith('CRM only')" ||
        fail "$ranks ranks on one node: one node, labelled CRM only"
      record "r$ranks.json" "abs(d['sypd'] - 10 * r['fom']['value'] / ($columns * 16) / 365) <= 1e-12 * d['sypd']" ||
        fail "$ranks ranks at $at: sypd is not dt x F / (columns a node x nx) / 365"
      echo "ok sypd at $at on $ranks ranks"
    done
  done
}

host_work_case() {
  local ranks per_rank
  for ranks in 1 2; do
    per_rank=$((8 / ranks)) # tiny: 8 CRMs, 2 global steps
    run "$ranks" --size tiny --output plain$ranks.h5 || fail "$ranks ranks without host work: exit $?"
    run "$ranks" --size tiny --host-work-us 2000 --output work$ranks.h5 --result w$ranks.json ||
      fail "$ranks ranks with --host-work-us 2000: exit $?"
    record "w$ranks.json" "d['host_work_us'] == 2000 and d['host_work_s'] >= 2000e-6 * $per_rank * 2" ||
      fail "$ranks ranks: host_work_s below 2000 us x $per_rank CRMs x 2 global steps"
    record "w$ranks.json" "d['host_work_s'] <= r['phases']['compute']['max']" ||
      fail "$ranks ranks: host work outside the compute phase"
    same plain$ranks.h5 work$ranks.h5 || fail "$ranks ranks: --host-work-us changed the answer"
    echo "ok host work on $ranks ranks"
  done
}

caar_2d_case() {
  run 1 --size caar-2d --output all.h5 --result all.json || fail "caar-2d: exit $?"
  record all.json "r['case'] == 'caar-2d' and r['verification']['status'] == 'pass'" || fail "caar-2d: case or verdict"
  record all.json "[r['problem'][k]['global'] for k in ('nx', 'nz', 'instances')] == [8, 28, 866]" ||
    fail "caar-2d is not 866 CRMs of 8 x 28"
  run 1 --size caar-2d --backend omp --chunk 16 --output chunk16.h5 --result chunk16.json ||
    fail "caar-2d --chunk 16: exit $?"
  record chunk16.json "d['chunk'] == 16" || fail "caar-2d --chunk 16 ran other blocks"
  same all.h5 chunk16.h5 || fail "caar-2d: chunks of 16 gave another answer than the whole group"
  echo "ok caar-2d: 866 CRMs of 8 x 28, chunks of 16 bit for bit"
}

case $case_name in
  sypd) sypd_case ;;
  host_work) host_work_case ;;
  caar_2d) caar_2d_case ;;
  *) fail "unknown case $case_name" ;;
esac
