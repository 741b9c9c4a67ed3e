# Sourced by crm's test scripts after they set `work`: a fresh work folder
# (the current directory), mapp-crm on 2 passive OpenMP threads, fail, the
# answers helpers, and run RANKS ARGS... (mapp-crm quietly on RANKS ranks).
bin=$MAPP_BIN_DIR/mapp-crm
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/../../common/tests/answers.sh"
run() { # RANKS ARGS...: mapp-crm quietly
  local ranks=$1
  shift
  on_ranks "$ranks" "$bin" --quiet "$@"
}
