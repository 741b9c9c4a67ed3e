#!/bin/bash
# mapp history end to end, on histories made from a real record
# (tests/data/history-template.json, a heat run of ci/quick-sweep.sh) with its
# revision, time, repetition, setting and figure of merit replaced:
#   add twice stores once; a kill -9 during a large add leaves none of it and
#   the next add and show work; concurrent adds each store their records
#   once; a corrupt, a foreign and a non-SQLite file as --db exit 2 with one
#   line, an unwritable path exits 3; check exits 1 on a planted 10 %
#   slowdown naming the configuration and the revision, 0 on a flat series,
#   and follows --threshold; a known commit date orders revisions before run
#   time does; plot draws the trend; report shows it; sweep --history adds
#   the sweep it ran. Systems: records of systems a and b are two series per
#   configuration (system= filters them, the site groups by them), a
#   planted 10 % step in b is found and switching from a to b finds none;
#   a history of schema 1 (tests/data/history-v1.sqlite, made by mapp before
#   schema 2) is migrated once and keeps every record; two real sweeps with
#   system: a and system: b in their env files give two series.
. "$(dirname "$0")/lib.sh"
TEMPLATE=${1:?usage: history.sh history-template.json}
unset MAPP_HISTORY

# The template on one line with @REV@ @TIME@ @REP@ @FOM@ @SET@ in place of
# its values.
{ tr -d '\n' <"$TEMPLATE"; echo; } >template.jsonl
FOM=$(grep -o '"fom": {[^}]*}' template.jsonl | grep -o '"value": [0-9.e+-]*' | cut -d' ' -f2)
sed -e 's/"git_revision": "[^"]*"/"git_revision": "@REV@"/' -e 's/"time": "[^"]*"/"time": "@TIME@"/' \
    -e 's/"repetition": [0-9]*/"repetition": @REP@/' -e "s/\"value\": $FOM/\"value\": @FOM@/" \
    -e 's/"setting": null/"setting": "@SET@"/' template.jsonl >pattern.txt
for p in REV TIME REP FOM SET; do
  [ "$(grep -o "@$p@" pattern.txt | wc -l)" = 1 ] || fail "the template has no single place for @$p@"
done

# rev K: the revision of synthetic commit K (distinct in its first 7 digits, as plot's tics show them)
rev() { printf '%06xc0ffee' $((0x100000 + $1)); }

# synth SETTING REVISIONS STEP_AT STEP NOISE REPETITIONS SEED: records of one
# configuration; from revision STEP_AT on the figure of merit is (1 - STEP)
# times the template's, each repetition times 1 +- NOISE (uniform).
synth() {
  awk -v set="$1" -v revs="$2" -v at="$3" -v step="$4" -v noise="$5" -v reps="$6" -v seed="$7" -v fom="$FOM" '
    BEGIN {
      getline line <"pattern.txt"
      # the line cut at its placeholders once, so each record is a few printfs
      n = 0
      while (match(line, /@[A-Z]+@/)) {
        piece[n] = substr(line, 1, RSTART - 1); name[n++] = substr(line, RSTART + 1, RLENGTH - 2)
        line = substr(line, RSTART + RLENGTH)
      }
      srand(seed)
      for (k = 0; k < revs; ++k)
        for (r = 0; r < reps; ++r) {
          value["REV"] = sprintf("%06xc0ffee", 1048576 + k)
          value["TIME"] = sprintf("2026-01-%02dT%02d:%02d:00Z", 1 + int(k / 24), k % 24, r % 60)
          value["REP"] = r
          value["FOM"] = sprintf("%.9g", fom * (k >= at ? 1 - step : 1) * (1 + noise * (2 * rand() - 1)))
          value["SET"] = set
          for (i = 0; i < n; ++i) printf "%s%s", piece[i], value[name[i]]
          print line
        }
    }'
}

# holds FILE N: `show` says the history FILE holds N records.
holds() {
  expect_exit 0 "$MAPP" history show --db "$1"
  grep -q "^history $1: $2 records," <<<"$OUT" || { printf '%s\n' "$OUT" >&2; fail "$1 does not hold $2 records"; }
}

# ---- add twice: stored once
synth flat 20 99 0 0.03 5 1 >flat.jsonl
expect_exit 0 "$MAPP" history add flat.jsonl --db h.sqlite
expect_output "added 100 of 100 records"
expect_exit 0 "$MAPP" history add flat.jsonl --db h.sqlite
expect_output "added 0 of 100 records (100 already there)"
holds h.sqlite 100
# a folder works as a results.jsonl does; MAPP_HISTORY names the file
mkdir -p folder && synth slow 20 12 0.10 0.03 5 2 >folder/results.jsonl
MAPP_HISTORY=h.sqlite expect_exit 0 "$MAPP" history add folder
expect_output "added 100 of 100"

# ---- check: a planted 10 % slowdown from revision 12 is named with its
# revision; the flat series passes
expect_exit 1 "$MAPP" history check --db h.sqlite
expect_output "SLOWER heat mpi/serial tiny weak n1 t1 slow @vm: "
expect_output "from revision $(rev 12)"
grep -q "SLOWER.* flat" <<<"$OUT" && fail "the flat series was flagged: $OUT"
expect_output "ok     heat mpi/serial tiny weak n1 t1 flat"
# --junit: the slow series a "slowdown" failure naming its revision, the flat one passed; valid
if command -v xmllint >/dev/null; then
  expect_exit 1 "$MAPP" history check --db h.sqlite --junit check.xml
  xmllint --noout --schema "$MAPP_SOURCE_DIR/harness/tests/data/junit/junit.xsd" check.xml || fail "check.xml is not valid JUnit"
  [ "$(grep -c '<failure type="slowdown"' check.xml)" = 1 ] || fail "check.xml has not exactly 1 slowdown"
  grep -q "<failure type=\"slowdown\" message=\"[^\"]*from revision $(rev 12)" check.xml || fail "the slowdown does not name revision 12"
  grep -q 'name="heat mpi/serial tiny weak n1 t1 flat @vm"' check.xml || fail "no case for the flat series"
fi
expect_exit 0 "$MAPP" history check --db h.sqlite setting=flat
expect_exit 0 "$MAPP" history check --db h.sqlite flat
expect_exit 1 "$MAPP" history check --db h.sqlite setting=slow
expect_exit 0 "$MAPP" history check --db h.sqlite setting=slow --threshold 15

# ---- --threshold decides a 2 % step (low noise, so it is found every time)
synth two 30 15 0.02 0.005 5 3 >two.jsonl
expect_exit 0 "$MAPP" history add two.jsonl --db h.sqlite
expect_exit 1 "$MAPP" history check --db h.sqlite setting=two --threshold 1
grep -E "^SLOWER heat mpi/serial tiny weak n1 t1 two @vm: -(1\.[789]|2\.[012]) % from revision $(rev 15) " <<<"$OUT" >/dev/null ||
  fail "check --threshold 1 does not name the 2 % step at $(rev 15): $OUT"
expect_exit 0 "$MAPP" history check --db h.sqlite setting=two --threshold 5
expect_exit 0 "$MAPP" history check --db h.sqlite setting=two

# ---- show: latest median, change against the previous revision, change points
expect_exit 0 "$MAPP" history show --db h.sqlite
expect_output "350 records, 30 revisions, 3 configurations"
grep -E "^heat mpi/serial tiny weak n1 t1 slow @vm +cell-updates/s +20 +$(rev 19) .* $(rev 12) slower -(9|10)\.[0-9] %" <<<"$OUT" \
  >/dev/null || fail "show lacks slow's latest revision and change point: $OUT"
grep -E "^heat mpi/serial tiny weak n1 t1 flat .* -$" <<<"$OUT" >/dev/null || fail "show gives flat change points: $OUT"
expect_exit 0 "$MAPP" history show --db h.sqlite --revisions setting=slow
[ "$(grep -c "c0ffee  " <<<"$OUT")" = 21 ] || fail "show --revisions does not list slow's 20 revisions: $OUT"
grep -E "^  $(rev 12) .* <- change point: slower -(9|10)\.[0-9] %" <<<"$OUT" >/dev/null ||
  fail "show --revisions does not mark the change point at $(rev 12): $OUT"

# ---- plot: one figure per configuration, change points marked
expect_exit 0 "$MAPP" history plot --db h.sqlite --out trend setting=slow
stem=trend/history-heat_mpi_serial_tiny_weak_n1_t1_slow__vm
[ "$(png_size $stem.png)" = 900x600 ] || fail "$stem.png is not a 900x600 PNG"
[ -s $stem.svg ] || fail "no $stem.svg"
grep -q "set arrow from 11.5" $stem.gp || fail "the change point before revision 12 is not marked in $stem.gp"
grep -q "'$(rev 12 | cut -c1-7)' 12" $stem.gp || fail "the x tics are not the short hashes"
[ "$(wc -l <$stem.dat)" = 21 ] || fail "$stem.dat does not hold 20 revisions"

# ---- systems: a series per system. on SYSTEM: the records on stdin measured on SYSTEM.
on() { sed "s/\"host\": \"vm\"/\"host\": \"vm\", \"system\": \"$1\"/"; }
# switch: revisions 0-9 ran on a, 10-19 on b, whose machine is 20 % slower:
# no step in either series (with a key that ignored the system, a -20 %
# step at revision 10)
synth switch 20 10 0.20 0.03 5 7 >switch.jsonl
{ head -n 50 switch.jsonl | on a; tail -n +51 switch.jsonl | on b; } >sys.jsonl
# step: every revision on both; b 10 % slower from revision 12, a flat
synth step 20 99 0 0.03 5 8 | on a >>sys.jsonl
synth step 20 12 0.10 0.03 5 9 | on b >>sys.jsonl
expect_exit 0 "$MAPP" history add sys.jsonl --db sys.sqlite
expect_output "added 300 of 300 records"
expect_exit 0 "$MAPP" history show --db sys.sqlite
expect_output "300 records, 20 revisions, 4 configurations, 2 systems"
for c in "switch @a" "switch @b" "step @a" "step @b"; do
  grep -E "^heat mpi/serial tiny weak n1 t1 $c +cell-updates/s +(10|20) " <<<"$OUT" >/dev/null ||
    { printf '%s\n' "$OUT" >&2; fail "show has no series '$c'"; }
done
expect_exit 1 "$MAPP" history check --db sys.sqlite
expect_output "SLOWER heat mpi/serial tiny weak n1 t1 step @b: "
expect_output "from revision $(rev 12)"
[ "$(grep -c '^SLOWER' <<<"$OUT")" = 1 ] || { printf '%s\n' "$OUT" >&2; fail "check flags more than the step in b"; }
expect_exit 0 "$MAPP" history check --db sys.sqlite setting=switch
expect_exit 0 "$MAPP" history check --db sys.sqlite system=a
expect_exit 1 "$MAPP" history check --db sys.sqlite system=b setting=step
expect_exit 0 "$MAPP" history show --db sys.sqlite --only system=a
grep -q "@b" <<<"$OUT" && fail "show --only system=a shows system b: $OUT"
expect_exit 0 "$MAPP" history show --db sys.sqlite system=c
expect_output "no configuration matches"
expect_exit 0 "$MAPP" history plot --db sys.sqlite --out systrend setting=step
for x in a b; do [ -s systrend/history-heat_mpi_serial_tiny_weak_n1_t1_step__$x.svg ] || fail "no step figure of $x"; done
# the site: a table per system, each under its heading
expect_exit 0 "$MAPP" history publish syssite --db sys.sqlite
[ "$(grep -o '<h2[^>]*>system [ab]</h2>' syssite/index.html | tr '\n' ' ')" = "<h2>system a</h2> <h2>system b</h2> " ] ||
  fail "the site's index does not group by system: $(grep -o '<h2[^>]*>[^<]*' syssite/index.html)"
[ "$(grep -c '<table' syssite/index.html)" = 2 ] || fail "the site's index has not a table per system"

# ---- a history of schema 1, made by mapp before systems (21 records, hosts
# node1 and node2, one failed run): migrated once, every record kept, each
# with its host as its system; its two hosts are two series now
cp "$MAPP_SOURCE_DIR/harness/tests/data/history-v1.sqlite" old.sqlite
rows() { # DB: every record's digest, host, system (or -), config and whole JSON, by id
  python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = [c[1] for c in db.execute('PRAGMA table_info(records)')]
sys_col = 'system' if 'system' in cols else \"'-'\"
print('schema', db.execute('PRAGMA user_version').fetchone()[0])
for row in db.execute('SELECT id, digest, host, ' + sys_col + ', config, record, revision, fom_value FROM records ORDER BY id'):
    print('|'.join(map(str, row)))" "$1"
}
rows old.sqlite >before.txt
grep -q '^schema 1$' before.txt || fail "tests/data/history-v1.sqlite is not of schema 1"
[ "$(grep -c '|' before.txt)" = 21 ] || fail "tests/data/history-v1.sqlite does not hold 21 records"
expect_exit 0 "$MAPP" history show --db old.sqlite
expect_output "history old.sqlite migrated from schema 1 to 2: its 21 records kept"
expect_output "21 records, 6 revisions, 2 configurations, 2 systems"
expect_output "heat mpi/serial tiny weak n1 t1 old @node1"
expect_output "heat mpi/serial tiny weak n1 t1 old @node2"
rows old.sqlite >after.txt
grep -q '^schema 2$' after.txt || fail "the migrated history is not of schema 2"
# each row as it was, its system its host, its key the old one with " @HOST"
python3 - before.txt after.txt <<'PY' || fail "the migration changed or lost a record"
import sys
before = [l.rstrip("\n").split("|", 7) for l in open(sys.argv[1]) if "|" in l]
after = [l.rstrip("\n").split("|", 7) for l in open(sys.argv[2]) if "|" in l]
assert len(before) == len(after) == 21, (len(before), len(after))
for b, a in zip(before, after):
    assert a[:3] == b[:3] and a[5:] == b[5:], (b[:3], a[:3])
    assert a[3] == b[2], ("system", a[3], "host", b[2])
    assert a[4] == b[4] + " @" + b[2], (a[4], b[4])
PY
expect_exit 0 "$MAPP" history show --db old.sqlite
grep -q "migrated" <<<"$OUT" && fail "the history was migrated twice: $OUT"
# adding the records again stores none twice; a newer schema is refused
python3 -c "
import json, sqlite3
for (r,) in sqlite3.connect('old.sqlite').execute('SELECT record FROM records ORDER BY id'): print(r)" >old.jsonl
expect_exit 0 "$MAPP" history add old.jsonl --db old.sqlite
expect_output "added 0 of 21 records (21 already there)"
python3 -c "import sqlite3; c = sqlite3.connect('old.sqlite'); c.execute('PRAGMA user_version = 3'); c.commit()"
expect_exit 2 "$MAPP" history show --db old.sqlite
expect_output "is a mapp history of schema 3; this mapp reads schema 2 or older"

# ---- kill -9 during a large add: none of it is visible, the next add and show work
synth big 4 99 0 0.03 1000 4 >big.jsonl
# kill_adding DB: starts adding big.jsonl to DB and kills it with SIGKILL
# while its transaction writes (the rollback journal exists only then).
kill_adding() {
  "$MAPP" history add big.jsonl --db "$1" >/dev/null 2>&1 &
  local adder=$!
  # polled without sleeping (builtins only): the transaction may last only
  # a few milliseconds, less than one sleep between polls
  while [ ! -e "$1-journal" ] && kill -0 $adder 2>/dev/null; do :; done
  [ -e "$1-journal" ] || fail "the add ended before it could be killed in its transaction (big.jsonl too small?)"
  kill -9 $adder
  wait $adder 2>/dev/null && fail "the killed add exited 0" || true
}
kill_adding h.sqlite
holds h.sqlite 350
grep -q " big " <<<"$OUT" && fail "a half-added sweep is visible: $OUT"
expect_exit 0 "$MAPP" history add big.jsonl --db h.sqlite
expect_output "added 4000 of 4000 records"
holds h.sqlite 4350
# the very first add of a new history killed: an empty history, then a whole one
kill_adding first.sqlite
holds first.sqlite 0
expect_exit 0 "$MAPP" history add big.jsonl --db first.sqlite
holds first.sqlite 4000

# ---- concurrent adds into a new file: each record stored once
synth c1 10 99 0 0.03 100 5 >c1.jsonl
synth c2 10 99 0 0.03 100 6 >c2.jsonl
pids=()
for f in c1 c2 c1 c2; do
  "$MAPP" history add $f.jsonl --db conc/h.sqlite >add-$f-${#pids[@]}.log 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { cat add-*.log; fail "a concurrent add failed"; }; done
holds conc/h.sqlite 2000
[ "$(cat add-*.log | grep -c 'added 1000 of 1000')" = 2 ] || { cat add-*.log; fail "not exactly one add of each file stored it"; }

# ---- a known commit date orders revisions before the time they ran does:
# 3 of this repository's latest commits with distinct commit dates (commits
# made within one second tie, and a tie is ordered by run time), the newest
# run first
if revs=$(git -C "$MAPP_SOURCE_DIR" log -n 50 --format='%H %ct' 2>/dev/null |
          awk '$2 != last { print $1; last = $2 }' | head -n 3) && [ "$(wc -l <<<"$revs")" = 3 ]; then
  i=0
  for full in $revs; do # newest first: run at hours 0, 1, 2
    for r in 0 1 2; do
      sed -e "s/@REV@/${full:0:12}/" -e "s/@TIME@/2026-01-01T0$i:0$r:00Z/" -e "s/@REP@/$r/" \
          -e "s/@FOM@/$((1000 + i))/" -e "s/@SET@/dated/" pattern.txt
    done
    i=$((i + 1))
  done >dated.jsonl
  expect_exit 0 "$MAPP" history add dated.jsonl --db dated.sqlite
  expect_exit 0 "$MAPP" history show --db dated.sqlite
  newest=$(head -1 <<<"$revs")
  grep -E " 3 +${newest:0:12} +1000 " <<<"$OUT" >/dev/null || fail "the newest commit is not the latest revision: $OUT"
else
  echo "history: no 3 commits in $MAPP_SOURCE_DIR: commit-date order not checked"
fi

# ---- report: the trend of each configuration of the folder with >= 3 revisions
mkdir -p res/quick && cp folder/results.jsonl res/quick/results.jsonl
cp h.sqlite res/history.sqlite
expect_exit 0 "$MAPP" report res/quick
grep -q "^## Performance history" res/quick/report.md || fail "report.md has no performance history"
grep -q "^!\[heat mpi/serial tiny weak n1 t1 slow @vm\](plots/history-heat_mpi_serial_tiny_weak_n1_t1_slow__vm.png)" res/quick/report.md ||
  fail "report.md does not show slow's trend"
grep -q "history-.*flat" res/quick/report.md && fail "report.md shows a configuration its folder does not have"
[ "$(png_size res/quick/plots/history-heat_mpi_serial_tiny_weak_n1_t1_slow__vm.png)" = 900x600 ] || fail "no trend PNG"

# ---- sweep --history: the finished sweep joins OUT/history.sqlite
if [ -x "$MAPP_BIN_DIR/mapp-heat" ]; then
  heat_spec spec.yaml hsweep 2
  expect_exit 0 "$MAPP" sweep spec.yaml --out sw --history
  expect_output "history sw/history.sqlite: added 2 of 2 records"
  holds sw/history.sqlite 2
  expect_output "heat mpi/serial tiny strong n1 t1 "
  # two sweeps on systems a and b (system: in their env files) into one
  # history: two series of the configuration, each record naming its system
  for x in a b; do
    sed "s/^name: local/name: $x\nsystem: $x/" "$MAPP_SOURCE_DIR/envs/local.yaml" >env-$x.yaml
    expect_exit 0 "$MAPP" sweep spec.yaml --env env-$x.yaml --out sys-$x
    grep -Eq "\"system\": ?\"$x\"" sys-$x/hsweep/results.jsonl || fail "the records of env-$x.yaml do not name system $x"
    expect_exit 0 "$MAPP" history add sys-$x/hsweep --db sweeps.sqlite
  done
  expect_exit 0 "$MAPP" history show --db sweeps.sqlite
  expect_output "4 records, 1 revisions, 2 configurations, 2 systems"
  expect_output "heat mpi/serial tiny strong n1 t1 @a "
  expect_output "heat mpi/serial tiny strong n1 t1 @b "
  # without system: the record's host
  grep -Eq "\"system\": ?\"$(hostname)\"" sw/hsweep/results.jsonl || fail "a record without system: does not name its host"
  sed "s/^name: local/name: bad\nsystem: two words/" "$MAPP_SOURCE_DIR/envs/local.yaml" >env-bad.yaml
  expect_exit 2 "$MAPP" sweep spec.yaml --env env-bad.yaml --out sys-bad
  expect_one_error_line "$MAPP" sweep spec.yaml --env env-bad.yaml --out sys-bad
else
  echo "history: mapp-heat is not built: sweep --history not checked"
fi

# ---- bad files: one line, exit 2 (nothing written to them); unwritable: exit 3
echo "this is not a database" >text.sqlite
python3 -c "import sqlite3; c = sqlite3.connect('foreign.sqlite'); c.execute('create table t (x)'); c.commit()"
cp h.sqlite corrupt.sqlite
dd if=/dev/urandom of=corrupt.sqlite bs=1 seek=100 count=3900 conv=notrunc status=none
for bad in text foreign corrupt; do
  sum=$(md5sum <$bad.sqlite)
  for verb in "add flat.jsonl" show check "plot --out p"; do
    expect_exit 2 "$MAPP" history $verb --db $bad.sqlite
    expect_one_error_line "$MAPP" history $verb --db $bad.sqlite
  done
  [ "$(md5sum <$bad.sqlite)" = "$sum" ] || fail "$bad.sqlite was written to"
done
expect_exit 2 "$MAPP" history show --db foreign.sqlite
expect_output "not a mapp history"
touch afile
expect_exit 3 "$MAPP" history add flat.jsonl --db afile/h.sqlite
expect_one_error_line "$MAPP" history add flat.jsonl --db afile/h.sqlite
expect_exit 3 "$MAPP" history add flat.jsonl --db /proc/self/nothing/h.sqlite

# ---- bad input
expect_exit 2 "$MAPP" history
expect_exit 2 "$MAPP" history frobnicate
expect_exit 2 "$MAPP" history show --db missing.sqlite
expect_output "no history at missing.sqlite"
expect_exit 2 "$MAPP" history show --db h.sqlite colour=red
expect_exit 2 "$MAPP" history check --db h.sqlite --threshold -1
expect_exit 2 "$MAPP" history plot --db h.sqlite --format gif
expect_exit 2 "$MAPP" history add missing.jsonl --db h.sqlite
holds h.sqlite 4350
echo "history: ok"
