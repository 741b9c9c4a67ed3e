# Shared by the heat variant/NAM/animation tests (sourced, not run).
# Needs MAPP_BIN_DIR (set by ctest), MPIEXEC and H5DIFF (set by the test).
set -u
HEAT="$MAPP_BIN_DIR/mapp-heat"
ANIMATE="$MAPP_BIN_DIR/mapp-heat-animate"
command -v "${H5DIFF:-h5diff}" >/dev/null || { echo "skip: h5diff not found"; exit 77; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

# run RANKS THREADS VARIANT ARGS...: mapp-heat under MPI, quiet.
run() {
  local ranks=$1 threads=$2 variant=$3 backend=omp
  shift 3
  [ "$variant" = mpi ] && backend=serial
  "$MPIEXEC" -np "$ranks" --oversubscribe "$HEAT" --variant "$variant" --backend "$backend" \
    --threads "$threads" --quiet "$@"
}

# reference STEPS ARGS...: the serial answer after STEPS timesteps.
reference() {
  local steps=$1
  shift
  "$HEAT" --steps "$steps" --quiet --output "$WORK/ref_$steps.h5" "$@" || { echo "FAIL: serial reference"; exit 1; }
  echo "$WORK/ref_$steps.h5"
}

# same WHAT FILE_A OBJ_A FILE_B OBJ_B: bit for bit (h5diff without a tolerance).
same() {
  if "${H5DIFF:-h5diff}" -q "$2" "$4" "$3" "$5"; then
    echo "ok: $1"
  else
    echo "FAIL: $1 differs from the serial reference"
    "${H5DIFF:-h5diff}" -r "$2" "$4" "$3" "$5" | head -5
    failures=$((failures + 1))
  fi
}

# check_gif FILE FRAMES: FILE is a GIF89a animation of FRAMES frames (each
# frame of an animated GIF carries a graphic control extension, 21 F9 04).
check_gif() {
  [ "$(head -c 6 "$1")" = GIF89a ] || { echo "FAIL: $1 is not a GIF89a file"; exit 1; }
  local frames
  frames=$(LC_ALL=C grep -obUaP '\x21\xF9\x04' "$1" | wc -l)
  [ "$frames" -eq "$2" ] || { echo "FAIL: $1 has $frames frames, expected $2"; exit 1; }
}
