# What every peer's ctest cases share (miniapps/APP/peer/peer_tests.sh
# sources it with its own arguments):
#   peer_tests.sh CASE LAUNCHER WORKDIR BUILD_VENV SOURCE_VENV
# It sets case_, exe, work, src, bin and py, enters a fresh WORKDIR, and
# defines fail and refused. The case no_venv (the launcher without its venv
# answers with one line naming ci/peer-venv.sh and the path) runs here;
# without the venv ($MAPP_PEERS_VENV, else BUILD_VENV, else SOURCE_VENV)
# every other case skips (exit 77) saying so. Needs MAPP_SOURCE_DIR and
# MAPP_BIN_DIR (mapp_add_test sets them).
set -u
case_=${1:?CASE}
exe=${2:?LAUNCHER}
work=${3:?WORKDIR}
build_venv=${4:?BUILD_VENV}
source_venv=${5:?SOURCE_VENV}
src=${MAPP_SOURCE_DIR:?}
bin=${MAPP_BIN_DIR:?}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

fail() { echo "FAIL: $*"; exit 1; }

# refused ARGS...: the launcher exits 2 with exactly one line on stderr.
refused() {
  local rc lines
  "$exe" "$@" >out.txt 2>err.txt
  rc=$?
  lines=$(grep -c '' err.txt)
  echo "$(basename "$exe") $*: exit $rc, stderr: $(cat err.txt)"
  [ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
  [ "$lines" -eq 1 ] || fail "$lines lines on stderr, expected 1"
}

if [ "$case_" = no_venv ]; then
  MAPP_PEERS_VENV=/nonexistent refused --size tiny
  grep -q 'ci/peer-venv.sh' err.txt || fail "the line does not name ci/peer-venv.sh"
  grep -q '/nonexistent' err.txt || fail "the line does not name the venv path"
  exit 0
fi

venv=${MAPP_PEERS_VENV:-}
if [ -z "$venv" ]; then
  if [ -x "$build_venv/bin/python" ]; then venv=$build_venv; else venv=$source_venv; fi
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "SKIP: no peers venv at $venv (ci/peer-venv.sh makes it; ci/test.sh runs it)"
  exit 77
fi
py=$venv/bin/python

# peer_min_time [ARGS...]: the case min_time, the same for every peer
# (mapp_peer.py's repeat_timed): --min-time repeats the timed phase from the
# same start, the first run a warm-up left out, the figure the fastest of
# the others, every repeat's answer the first's bit for bit
# (iterations-identical). ARGS choose what the peer runs (a variant).
peer_min_time() {
  "$exe" --size tiny "$@" --min-time 0.3 --result repeated.json >repeated.txt || fail "--min-time 0.3 exited $?"
  cat repeated.txt
  grep -q "timed phase run [0-9]* times (--min-time 0.3 s)" repeated.txt || fail "no line saying what --min-time repeated"
  "$py" - repeated.json <<'PY' || fail "the repeated run's record"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
t = r["timing"]
assert t["iterations"] >= 2 and t["warmup"] and t["timed_iterations"] == t["iterations"] - 1, t
assert t["fastest_s"] == min(t["seconds"][1:]) and abs(t["timed_s"] - sum(t["seconds"][1:])) < 1e-12, t
assert t["timed_s"] >= 0.3 or t["iterations"] >= 1000000, t
assert r["phases"]["compute"]["max"] == t["fastest_s"], (r["phases"]["compute"], t)
same = [c for c in r["verification"]["checks"] if c["name"] == "iterations-identical"]
assert same and same[0]["passed"], r["verification"]["checks"]
assert r["disturbance"]["interval_s"] > 0, r["disturbance"]
print("repeated", t["iterations"], "times; fastest", t["fastest_s"], "of", t["timed_iterations"], "timed")
PY
}
