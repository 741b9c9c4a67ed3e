#!/usr/bin/env bash
# smpirun for mapp's simulated environments (envs/sim-*.yaml): writes the
# host file a run of N ranks needs (one rank per host, in the platform's
# order) and starts the program under SimGrid SMPI.
#
#   envs/sim/smpirun-wrapper.sh -np N --platform FILE.xml [smpirun options] PROGRAM [ARGS]
#
# FILE.xml is taken as given, else from envs/platforms/. Its hosts are read
# from its <cluster prefix= suffix= radical="A-B"> and <host id=> elements.
# The simulated node computes at the platform's speed, and this machine's
# core is declared to run at that speed (smpi/host-speed), so compute bursts
# last as long simulated as they did here. Bad input (no platform, an
# unknown platform file, more ranks than hosts) is one line on stderr and
# exit 2.
set -euo pipefail
me=smpirun-wrapper
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "$me: error: $*" >&2; exit 2; }

np="" platform=""
while [ $# -gt 0 ]; do
  case "$1" in
    -np | -n) [ $# -ge 2 ] || fail "$1 needs a rank count"; np=$2; shift 2 ;;
    --platform | -platform) [ $# -ge 2 ] || fail "$1 needs a file"; platform=$2; shift 2 ;;
    *) break ;;
  esac
done
[[ "$np" =~ ^[1-9][0-9]*$ ]] || fail "-np N: a positive rank count is required (got '${np}')"
[ -n "$platform" ] || fail "--platform FILE.xml is required"
if [ ! -f "$platform" ] && [ -f "$here/../platforms/$platform" ]; then platform="$here/../platforms/$platform"; fi
[ -f "$platform" ] || fail "unknown platform file '$platform' (not a file, nor one of envs/platforms/)"
[ $# -gt 0 ] || fail "no program to run"

# The platform's hosts, in order: each cluster's prefix+N+suffix over its radical, then plain hosts.
list_hosts() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for el in root.iter():
    if el.tag == "cluster":
        for part in el.get("radical", "").split(","):
            lo, _, hi = part.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                print(f'{el.get("prefix", "")}{i}{el.get("suffix", "")}')
    elif el.tag == "host":
        print(el.get("id"))
PY
}
speed_of() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
speeds = [el.get("speed") for el in root.iter() if el.tag in ("cluster", "host") and el.get("speed")]
print(speeds[0] if speeds else "")
PY
}

hostfile=$(mktemp "${TMPDIR:-/tmp}/mapp-smpi-hosts.XXXXXX")
trap 'rm -f "$hostfile"' EXIT
list_hosts "$platform" > "$hostfile" 2>/dev/null || fail "cannot read the hosts of platform '$platform' (not SimGrid XML?)"
hosts=$(wc -l < "$hostfile")
[ "$hosts" -gt 0 ] || fail "platform '$platform' declares no hosts"
[ "$np" -le "$hosts" ] || fail "$np ranks but platform '$platform' has only $hosts hosts"
head -n "$np" "$hostfile" > "$hostfile.np" && mv "$hostfile.np" "$hostfile"
speed=$(speed_of "$platform")

# glibc's fastbins off: every simulated rank is one process's thread, so
# rank 0, which an allreduce makes allocate and free a small object per
# rank, left thousands of freed fastbin chunks that the next larger malloc
# (the OpenMP runtime's at every parallel region, which the serial loops
# still enter) consolidated inside rank 0's measured compute: +120-140 us a
# burst at 1,024 ranks, the compute phase doubled (docs/scale-sim.md).
export GLIBC_TUNABLES=glibc.malloc.mxfast=0${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}

# smpi/privatization: every rank its own copy of the program's globals.
# Correction factors 1: the platform's published link figures as they are.
# Logs: warnings and errors only, and not the kernel's per-rank exit notes.
# Not exec'd: the trap removes the host file when smpirun returns. Its
# "Execution failed with code N." is left out: the exit status says it.
status=0
smpirun -quiet -np "$np" -platform "$platform" -hostfile "$hostfile" \
  --cfg=smpi/privatization:1 ${speed:+--cfg=smpi/host-speed:$speed} \
  --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 \
  --log=root.thres:warning --log=smpi_kernel.thres:error \
  "$@" > >(grep -v '^Execution failed with code [0-9]*\.$' || true) || status=$?
wait
exit $status
