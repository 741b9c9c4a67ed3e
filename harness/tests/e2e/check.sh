#!/bin/bash
# mapp check: a file against itself passes, a perturbed copy fails (exit 1)
# under exact and passes under a loose enough model, missing files and other
# shapes are input errors (exit 2) naming the files.
# usage: check.sh MAPP_H5_TOOL
. "$(dirname "$0")/lib.sh"
TOOL=$1

"$TOOL" make base.h5 temperature 10 12
cp base.h5 same.h5
cp base.h5 perturbed.h5
"$TOOL" perturb perturbed.h5 temperature 53 1e-12   # [4,5]
"$TOOL" make other-shape.h5 temperature 12 10
"$TOOL" make other-name.h5 pressure 10 12

expect_exit 0 "$MAPP" check base.h5 same.h5
expect_output "temperature  model=exact bound=0  worst_abs=0  worst_rel=0  ulp=0  PASS"

expect_exit 1 "$MAPP" check base.h5 perturbed.h5
expect_output "FAIL (1 of 120 values out of bounds, first at [4,5])"
expect_output "at [4,5]"
expect_exit 0 "$MAPP" check base.h5 perturbed.h5 --model abs --bound 1e-9
expect_exit 1 "$MAPP" check base.h5 perturbed.h5 --model abs --bound 1e-13
expect_exit 0 "$MAPP" check base.h5 perturbed.h5 --model rel --bound 1e-12
expect_exit 1 "$MAPP" check base.h5 perturbed.h5 --model ulp --bound 1

# the baseline's own tolerance attributes apply without flags; flags override them
cp base.h5 loose.h5
"$TOOL" set-tolerance loose.h5 abs 1e-9
expect_exit 0 "$MAPP" check loose.h5 perturbed.h5
expect_output "model=abs bound=1e-09"
expect_exit 1 "$MAPP" check loose.h5 perturbed.h5 --model exact

expect_exit 2 "$MAPP" check missing.h5 base.h5
expect_output "missing.h5 does not exist"
expect_exit 2 "$MAPP" check base.h5 missing.h5
expect_exit 2 "$MAPP" check base.h5 other-shape.h5
expect_output "candidate other-shape.h5 has shape [12,10], baseline base.h5 has shape [10,12]"
expect_exit 2 "$MAPP" check base.h5 other-name.h5
expect_output "dataset 'temperature': candidate other-name.h5 does not have it"
echo "not hdf5" >text.h5
expect_exit 2 "$MAPP" check base.h5 text.h5
expect_output "text.h5 is not an HDF5 file"
expect_one_error_line "$MAPP" check base.h5 other-shape.h5
echo "check: ok"
