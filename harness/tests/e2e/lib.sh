# Shared by the harness's end-to-end tests: strict mode, a scratch folder
# removed on exit, and assertions that say what they expected.
set -euo pipefail

: "${MAPP_BIN_DIR:?run through ctest (MAPP_BIN_DIR unset)}"
: "${MAPP_SOURCE_DIR:?run through ctest (MAPP_SOURCE_DIR unset)}"
MAPP="$MAPP_BIN_DIR/mapp"
SCRATCH=$(mktemp -d /tmp/mapp-harness-test.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_exit CODE CMD... : runs CMD, keeps its output in $OUT, checks the exit code.
expect_exit() {
  local want=$1 got=0
  shift
  OUT=$("$@" 2>&1) || got=$?
  if [ "$got" != "$want" ]; then
    printf '%s\n' "$OUT" >&2
    fail "'$*' exited $got, expected $want"
  fi
}

# expect_output TEXT: the last expect_exit's output contains TEXT.
expect_output() {
  grep -qF -- "$1" <<<"$OUT" || { printf '%s\n' "$OUT" >&2; fail "output lacks '$1'"; }
}

# expect_stderr_line: bad input answers with exactly one line on stderr.
expect_one_error_line() {
  local err
  err=$("$@" 2>&1 >/dev/null) && fail "'$*' succeeded"
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { printf '%s\n' "$err" >&2; fail "'$*' printed more than one error line"; }
  grep -q 'error:' <<<"$err" || fail "'$*': no 'error:' in '$err'"
}

# png_size FILE: "WIDTHxHEIGHT" from the IHDR chunk (bytes 16-23, big-endian).
png_size() {
  local hex
  [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$1 is not a PNG"
  hex=$(od -An -tx1 -j16 -N8 "$1" | tr -d ' \n')
  echo "$((16#${hex:0:8}))x$((16#${hex:8:8}))"
}

# count_lines FILE: records in a results file.
count_lines() { wc -l <"$1" | tr -d ' '; }

require_app() {
  [ -x "$MAPP_BIN_DIR/mapp-$1" ] || { echo "mapp-$1 is not built: skipping"; exit 77; }
}

# heat_spec FILE NAME REPS: a spec of one heat configuration (mpi/serial,
# 1 rank, tiny), REPS repetitions.
heat_spec() {
  cat >"$1" <<YAML
name: $2
repetitions: $3
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1]
    sizes: [tiny]
YAML
}

# fom_records FILE CENTER SEED [FIELDS]: 10 heat records of FOM CENTER +- 3 %
# (a seeded LCG), each beside a crm configuration that stays unchanged;
# FIELDS (say '"timing":{"timed_s":0.02},') go into every record.
fom_records() {
  local file=$1 center=$2 seed=$3 extra=${4:-} i fom
  : >"$file"
  for i in $(seq 1 10); do
    seed=$(((seed * 1103515245 + 12345) % 2147483648))
    fom=$(awk -v c="$center" -v s="$seed" 'BEGIN {printf "%.6g", c * (1 + 0.03 * (2 * s / 2147483648 - 1))}')
    printf '{"app":"heat","variant":"mpi","backend":"serial","size":"tiny","scaling":"strong","ranks":2,"threads":1,"exit_code":0,"wall_s":1.0,%s"fom":{"name":"cell-updates/s","value":%s}}\n' "$extra" "$fom" >>"$file"
    printf '{"app":"crm","variant":"batched","backend":"omp","size":"tiny","scaling":"strong","ranks":1,"threads":2,"exit_code":0,"wall_s":1.0,%s"fom":{"name":"crm-column-steps/s","value":%s}}\n' "$extra" "$((5000 + i))" >>"$file"
  done
}
