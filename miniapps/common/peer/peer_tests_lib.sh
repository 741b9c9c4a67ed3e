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
