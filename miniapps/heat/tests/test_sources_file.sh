#!/usr/bin/env bash
# --sources-file in the original BSC Heat's format gives bit for bit the
# answer of the same sources given as --source flags, and the original's
# files with trailing "# comments" the answer of the same file without.
. "$(dirname "$0")/heat_test_lib.sh"
dir=$(dirname "$0")/sources
"$HEAT" --quiet --output "$WORK/file.h5" --sources-file "$dir/bsc.txt" || { echo "FAIL: run with the file"; exit 1; }
"$HEAT" --quiet --output "$WORK/flags.h5" --source 0,0,1,2.5 --source 1,0.5,1,2.5 || { echo "FAIL: run with flags"; exit 1; }
"$HEAT" --quiet --output "$WORK/default.h5" || { echo "FAIL: default run"; exit 1; }
"$HEAT" --quiet --output "$WORK/commented.h5" --sources-file "$dir/bsc_commented.txt" ||
  { echo "FAIL: run with the original's commented file"; exit 1; }
same "--sources-file against --source" "$WORK/flags.h5" /temperature "$WORK/file.h5" /temperature
same "a file with trailing comments against the same file without" "$WORK/file.h5" /temperature "$WORK/commented.h5" /temperature
# and the sources do matter: the default sources give another answer
if "${H5DIFF:-h5diff}" -q "$WORK/default.h5" "$WORK/file.h5" /temperature /temperature; then
  echo "FAIL: the file's sources changed nothing"; failures=$((failures + 1))
fi
exit $((failures > 0))
