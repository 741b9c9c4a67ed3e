#!/usr/bin/env bash
# test_nam_bad.sh EXPECT_EXIT: every bad NAM region or snapshot flag gets one
# clear stderr line and exit 2, and a run stopped mid-way leaves a region
# that claims no snapshot.
. "$(dirname "$0")/heat_test_lib.sh"
expect=$1
check() { "$expect" 2 "$@" || failures=$((failures + 1)); }
good="$WORK/good.nam"
"$HEAT" --quiet --steps 10 --snapshot-every 5 --nam "$good" || { echo "FAIL: writing a region"; exit 1; }
size=$(stat -c %s "$good")

check "--snapshot-every: 0 is outside" -- "$HEAT" --snapshot-every 0 --nam "$WORK/x.nam"
check "--snapshot-every 30: must be between 1 and the 20 timesteps" -- "$HEAT" --snapshot-every 30 --nam "$WORK/x.nam"
check "--snapshot-every needs --nam" -- "$HEAT" --snapshot-every 5
check "--nam needs --snapshot-every" -- "$HEAT" --nam "$WORK/x.nam"
check "cannot create NAM region '/nonexistent/r.nam'" -- "$HEAT" --snapshot-every 5 --nam /nonexistent/r.nam
check "cannot open NAM region '$WORK/missing.nam'" -- "$ANIMATE" "$WORK/missing.nam"

cp "$good" "$WORK/trunc.nam" && truncate -s $((size - 8)) "$WORK/trunc.nam"
check "is truncated: $((size - 8)) bytes, its header says $size" -- "$ANIMATE" "$WORK/trunc.nam"
head -c 100 "$good" > "$WORK/stub.nam"
check "is truncated: 100 bytes, smaller than a NAM region header" -- "$ANIMATE" "$WORK/stub.nam"
check "holds a 100 x 120 grid, expected 64 x 120" -- "$ANIMATE" "$good" --rows 64
cp "$good" "$WORK/magic.nam"
printf 'XXXX' | dd of="$WORK/magic.nam" bs=1 count=4 conv=notrunc status=none
check "is not a mapp NAM region \(bad magic\)" -- "$ANIMATE" "$WORK/magic.nam"
# One byte of the header's grid (rows, at offset 32) flipped: header checksum.
cp "$good" "$WORK/header.nam"
printf '\x65' | dd of="$WORK/header.nam" bs=1 seek=32 count=1 conv=notrunc status=none
check "header fails its checksum" -- "$ANIMATE" "$WORK/header.nam"
# One byte of the second snapshot's data: its checksum fails.
cp "$good" "$WORK/data.nam"
offset=$(( 65536 + 100 * 120 * 8 + 4000 ))
printf '\x7f' | dd of="$WORK/data.nam" bs=1 seek=$offset count=1 conv=notrunc status=none
check "snapshot 1 \(timestep 10\) fails its checksum" -- "$ANIMATE" "$WORK/data.nam"

# A run killed mid-way: the region it leaves claims nothing.
"$HEAT" --quiet --size small --steps 1000000 --snapshot-every 1000 --nam "$WORK/killed.nam" &
pid=$!
for _ in $(seq 100); do [ -s "$WORK/killed.nam" ] && break; sleep 0.05; done
sleep 0.3
kill -9 $pid
wait $pid 2>/dev/null
check "holds no complete snapshot \(the run writing it did not finish\)" -- "$ANIMATE" "$WORK/killed.nam"
exit $((failures > 0))
