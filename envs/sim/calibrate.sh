#!/usr/bin/env bash
# Calibrates a SimGrid platform for THIS machine (envs/sim-local.yaml): measures
# a core's speed and the intra-node MPI latency and bandwidth here, and writes
# the platform file.
#
#   envs/sim/calibrate.sh [BUILD_DIR|-] [OUT.xml] [HOSTS]
#
#   BUILD_DIR  where the probe (envs/sim/calibrate_probe.c) is compiled, with
#              mpicc and with smpicc, and its outputs kept (default, or "-":
#              a temporary folder, removed)
#   OUT.xml    the platform written (default envs/platforms/local.xml)
#   HOSTS      simulated hosts (default 4; see "Hosts" below)
#
# It takes under a minute on a quiet machine. Run it where nothing else runs:
# other processes on the cores stretch every figure (the load average at the
# time is written into the file).
#
# What is measured, and why that way
#
# Host speed. SMPI runs the code between two MPI calls for real, measures how
# long the burst took here, turns it into flops with smpi/host-speed (the
# speed SMPI is told this machine's core has) and charges the simulated host
# flops / (its speed). The project's convention (envs/sim/smpirun-wrapper.sh,
# the fat-tree and dragonfly platforms) is that the platform's node speed is
# also passed as smpi/host-speed, so a burst lasts as long simulated as it did
# here: the ratio is 1 by construction, whatever figure is declared. For this
# machine's platform the figure declared is the one measured: a single core
# running y = a*y + x over two L1-resident arrays of doubles (2 flops an
# element; the probe compiled -O3 like the Release builds), the best of 30
# trials of ~0.03 s each in two rounds, 15 without SimGrid (a shared VM's
# slow spells last seconds; interference only ever slows a core down). It
# gives the platform's speed a meaning (a core of this machine on compiled
# C), and the same probe simulated on the new platform, two rounds
# interleaved with the measured ones, checks that a burst maps 1:1
# ("simulated/measured" in the file).
#
# Latency and bandwidth. A 2-rank Open MPI ping-pong here (mpirun with the
# flags of envs/local.yaml: --oversubscribe --bind-to none; shared memory),
# messages of 1 B to 4 MiB, every round trip timed on its own and the median
# taken (robust to the odd trip a descheduled rank stretches), three runs and
# the smallest median per size. One-way time = half a round trip.
#   latency L:   the one-way time of a 1-byte message;
#   bandwidth B: the median of n / (t(n) - L) over the messages of 256 KiB,
#                1 MiB and 4 MiB (the asymptotic rate; the median, since one
#                size a neighbour disturbed would tilt a fitted line).
# SMPI's network model with the wrapper's correction factors of 1 is Hockney's:
# a message of n bytes takes L + n/B. Open MPI's shared memory is not: eager
# copies below 4 KiB, then a rendezvous and single copies; the file lists
# measured and simulated one-way times per size so the difference is visible.
# (Per-size correction factors, SMPI's smpi/lat-factor and smpi/bw-factor,
# would fit the curve, but the wrapper sets both to 1 on the command line,
# which overrides a platform's <config>.)
#
# Polling. SMPI charges every MPI_Test and MPI_Iprobe that finds nothing a
# fixed time, by default 100 us, growing with each consecutive failed call
# (smpi/test, smpi/iprobe, smpi/grow-injected-times): a runtime that polls
# for its messages (subgraph's) then lasts many times longer simulated than
# measured. The same ping-pong run times 20,000 such calls of each (best of
# 5 batches, best of the 3 runs) and the platform's <config> charges each
# call that, without growth. (The wrapper does not set these on the command
# line, so the platform's values hold.)
#
# Hosts. The wrapper puts one rank on each host, in order, and refuses more
# ranks than hosts, so the platform needs a host per rank: N hosts of one core
# each (default 4, to compare 1, 2 and 4 ranks), each with a private link of
# latency L/2 and bandwidth B (a message between two hosts crosses two: L end
# to end; links split-duplex, so a rank sends and receives at B at once).
# The model is this machine with a core per rank: where N exceeds the cores
# here (2 on the VM this was first run on), the measured runs time-share cores
# and the simulated ones do not. It also leaves out what ranks of one node
# share: memory bandwidth and caches (every simulated burst was measured with
# the other ranks' bursts not running beside it: SMPI runs ranks one at a
# time), concurrent messages contending for memory, OS noise, and compute
# between two MPI calls shorter than SMPI's smpi/cpu-threshold (1 us, the
# wrapper's default), which is not charged at all.
#
# Exit: 0 written; 2 bad arguments or a missing tool (one line on stderr);
# 1 a probe failed.
set -euo pipefail
me=calibrate
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
fail() { echo "$me: error: $*" >&2; exit 2; }

usage="usage: calibrate.sh [BUILD_DIR|-] [OUT.xml] [HOSTS]"
case "${1:-}" in -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
case "${1:-}" in -?*) fail "unknown option '$1' ($usage)" ;; esac
[ $# -le 3 ] || fail "too many arguments ($usage)"
build=${1:-} out=${2:-$src/envs/platforms/local.xml} hosts=${3:-4}
[ "$build" != - ] || build=""
if ! [[ "$hosts" =~ ^[1-9][0-9]*$ ]] || [ "$hosts" -lt 2 ]; then fail "HOSTS: a count of 2 or more is required (got '$hosts')"; fi
command -v mpicc >/dev/null || fail "mpicc not found (Open MPI's compiler wrapper)"
command -v mpirun >/dev/null || fail "mpirun not found"
command -v python3 >/dev/null || fail "python3 not found"
[ -d "$(dirname "$out")" ] || fail "no folder for '$out'"

if [ -n "$build" ]; then
  mkdir -p "$build" || fail "cannot create '$build'"
  build=$(cd "$build" && pwd)
else
  build=$(mktemp -d "${TMPDIR:-/tmp}/mapp-calibrate.XXXXXX")
  trap 'rm -rf "$build"' EXIT
fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun_args=(--oversubscribe --bind-to none)   # envs/local.yaml's launcher_args
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

echo "$me: compiling the probe into $build" >&2
mpicc -O3 -DNDEBUG -o "$build/probe" "$here/calibrate_probe.c" || { echo "$me: mpicc failed" >&2; exit 1; }
simulate=no
if command -v smpicc >/dev/null && command -v smpirun >/dev/null; then
  if smpicc -O3 -DNDEBUG -o "$build/probe-sim" "$here/calibrate_probe.c" 2> "$build/smpicc.log"; then
    simulate=yes
  else
    echo "$me: warning: smpicc failed ($build/smpicc.log); the simulated check is left out" >&2
  fi
else
  echo "$me: warning: no smpicc/smpirun (SimGrid); the simulated check is left out" >&2
fi

# Host speed: size the sweep count for ~0.1 s a trial, then 5 trials.
echo "$me: host speed (1 core, y = a*y + x in L1)" >&2
"$build/probe" flops 20000 1 > "$build/flops-size.txt" || { echo "$me: the flops probe failed" >&2; exit 1; }
reps=$(awk '/^flops/ {r = int(20000 * 0.03 / ($4 > 1e-6 ? $4 : 1e-6)); print (r < 20000 ? 20000 : r)}' "$build/flops-size.txt")
"$build/probe" flops "$reps" 15 > "$build/flops.txt" || { echo "$me: the flops probe failed" >&2; exit 1; }

# Latency and bandwidth: three ping-pong runs.
echo "$me: ping-pong, 2 ranks: mpirun ${mpirun_args[*]} -np 2" >&2
for run in 1 2 3; do
  mpirun "${mpirun_args[@]}" -np 2 "$build/probe" pingpong > "$build/pingpong-$run.txt" 2> "$build/pingpong-$run.err" ||
    { echo "$me: the ping-pong failed: $(head -3 "$build/pingpong-$run.err")" >&2; exit 1; }
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Figures and the platform (first without the simulated check).
figures() {
  python3 - "$build" <<'PY'
import glob, sys
build = sys.argv[1]
flops = [tuple(map(float, (l.split()[1], l.split()[3]))) for l in open(f"{build}/flops.txt") if l.startswith("flops")]
f, t = min(flops, key=lambda p: p[1])
speed = f / t
best = {}
for path in sorted(glob.glob(f"{build}/pingpong-*.txt")):
    for line in open(path):
        w = line.split()
        if w and w[0] == "pingpong":
            n, med = int(w[1]), float(w[3])
            best[n] = min(best.get(n, med), med)
lat = best[min(best)]
# Bandwidth: the median over the messages of 256 KiB and more of n / (t - L)
# (a line through three points is at the mercy of one disturbed size).
rates = sorted(n / (t - lat) for n, t in best.items() if n >= 262144 and t > lat)
bw = rates[len(rates) // 2] if rates else float("nan")
polls = [tuple(map(float, (l.split()[2], l.split()[4])))
         for path in sorted(glob.glob(f"{build}/pingpong-*.txt")) for l in open(path) if l.startswith("poll ")]
test = min(p[0] for p in polls); iprobe = min(p[1] for p in polls)
print(f"speed={speed:.6e} lat={lat:.6e} bw={bw:.6e} test={test:.3e} iprobe={iprobe:.3e} flops={f:.0f}")
for n, t in sorted(best.items()):
    print(f"pp {n} {t:.6e}")
PY
}
figures > "$build/figures.txt"
read -r speed lat bw test iprobe < <(awk -F'[= ]' '/^speed=/ {print $2, $4, $6, $8, $10}' "$build/figures.txt")

# SimGrid units: flop/s as Gf, bytes/s as MBps (10^6), seconds as ns.
speed_attr=$(python3 -c "print(f'{$speed/1e9:.4g}Gf')")
bw_attr=$(python3 -c "print(f'{$bw/1e6:.5g}MBps')")
link_lat_attr=$(python3 -c "print(f'{$lat/2*1e9:.4g}ns')")
loop_lat_attr=$(python3 -c "print(f'{$lat*1e9:.4g}ns')")

machine() {
  local model cores
  model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
  cores=$(nproc 2>/dev/null || echo "?")
  echo "$(hostname), ${model:-unknown CPU}, $cores online cores, $(uname -sr)"
}

write_platform() {   # write_platform FILE [CHECK_TEXT_FILE]
  local file=$1 check=${2:-}
  {
    cat <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- This machine, for SimGrid SMPI (envs/sim-local.yaml): $hosts hosts of one
     core each, one per rank, as fast as a core here and linked by the
     intra-node MPI latency and bandwidth measured here. Generated: do not
     edit; run again on the machine it describes:

       envs/sim/calibrate.sh - $shown_out $hosts

     (the script's header says how each figure is measured and what the model
     leaves out).

     Measured $started on $(machine)
     load average $load_before before, $load_after after.

     Host speed: $speed_attr (a core running y = a*y + x over L1-resident
       doubles, compiled -O3; best of $(grep -c '^flops' "$build/flops.txt") trials of ~0.03 s). The wrapper passes it as
       smpi/host-speed too, so a compute burst lasts as long simulated as here.
       Check: $flops_check
     Latency: $(python3 -c "print(f'{$lat*1e6:.3f}')") us one way (1-byte ping-pong, Open MPI shared memory,
       median of each run's round trips, best of 3 runs): each host's link
       $link_lat_attr, two links host to host.
     Bandwidth: $(python3 -c "print(f'{$bw/1e9:.3f}')") GB/s (the median of n / (t(n) - latency) over
       messages of 256 KiB, 1 MiB and 4 MiB).
     Polling: an MPI_Test that finds nothing costs $(python3 -c "print(f'{$test*1e9:.0f}')") ns here, an MPI_Iprobe
       $(python3 -c "print(f'{$iprobe*1e9:.0f}')") ns (best of 5 batches of 20,000 calls, best of 3 runs):
       the config below charges each call that (smpi/test, smpi/iprobe), not
       SMPI's default 100 us growing with every failed call, which made a
       runtime that polls (subgraph's) tens of times slower simulated.
     Hosts: local-0 ... local-$((hosts - 1)). More hosts than cores here model this
       machine with a core per rank: measured runs of more ranks than cores
       time-share the cores, simulated ones do not.

     One-way time per message size, and a poll's cost, measured (Open MPI)
     and simulated (the same probe built with smpicc on this platform):
       bytes        measured       simulated
EOF
    if [ -n "$check" ] && [ -s "$check" ]; then
      cat "$check"
    else
      awk '/^pp / {printf "       %-10s %10.3f us  %12s\n", $2, $3 * 1e6, "-"}' "$build/figures.txt"
    fi
    cat <<EOF
-->
<platform version="4.1">
  <config>
    <prop id="smpi/test" value="$test"/>
    <prop id="smpi/iprobe" value="$iprobe"/>
    <prop id="smpi/grow-injected-times" value="no"/>
  </config>
  <zone id="world" routing="Full">
    <cluster id="local" prefix="local-" suffix="" radical="0-$((hosts - 1))" speed="$speed_attr"
             bw="$bw_attr" lat="$link_lat_attr" loopback_bw="$bw_attr" loopback_lat="$loop_lat_attr"/>
  </zone>
</platform>
EOF
  } > "$file"
}

# The command to write into the file: OUT as given relative to the source tree.
out_abs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
shown_out=${out_abs#"$src"/}
tmp_platform="$build/platform.xml"
flops_check="not run (no smpicc)"
write_platform "$tmp_platform"

# The check: the same probe simulated on this platform.
check=""
if [ "$simulate" = yes ]; then
  echo "$me: the probe simulated on the new platform" >&2
  wrapper="$here/smpirun-wrapper.sh"
  if "$wrapper" -np 1 --platform "$tmp_platform" "$build/probe-sim" flops "$reps" 15 > "$build/sim-flops.txt" 2> "$build/sim.err" &&
    "$wrapper" -np 2 --platform "$tmp_platform" "$build/probe-sim" pingpong > "$build/sim-pingpong.txt" 2>> "$build/sim.err"; then
    python3 - "$build" > "$build/check.txt" <<'PY'
import sys
build = sys.argv[1]
meas = {int(l.split()[1]): float(l.split()[2]) for l in open(f"{build}/figures.txt") if l.startswith("pp ")}
sim = {int(l.split()[1]): float(l.split()[3]) for l in open(f"{build}/sim-pingpong.txt") if l.startswith("pingpong")}
for n in sorted(meas):
    s = f"{sim[n] * 1e6:10.3f} us" if n in sim else "-"
    print(f"       {n:<10} {meas[n] * 1e6:10.3f} us  {s}")
m = [l.split() for l in open(f"{build}/figures.txt") if l.startswith("speed=")][0]
p = [l.split() for l in open(f"{build}/sim-pingpong.txt") if l.startswith("poll ")]
if p:
    mt, mi = (float(w.split("=")[1]) for w in m[3:5])
    print(f"       MPI_Test   {mt * 1e6:10.3f} us  {float(p[0][2]) * 1e6:10.3f} us")
    print(f"       MPI_Iprobe {mi * 1e6:10.3f} us  {float(p[0][4]) * 1e6:10.3f} us")
PY
    check="$build/check.txt"
    # A second round of each, native then simulated: this VM's slow spells
    # last seconds, and the best of trials spread over longer is steadier.
    # The speed declared is the best of all native trials (the simulated
    # bursts do not depend on it: it is host speed and node speed at once).
    if ! "$build/probe" flops "$reps" 15 >> "$build/flops.txt" ||
      ! "$wrapper" -np 1 --platform "$tmp_platform" "$build/probe-sim" flops "$reps" 15 >> "$build/sim-flops.txt" 2>> "$build/sim.err"; then
      echo "$me: the second flops round failed" >&2; exit 1
    fi
    figures > "$build/figures.txt"
    read -r speed lat bw test iprobe < <(awk -F'[= ]' '/^speed=/ {print $2, $4, $6, $8, $10}' "$build/figures.txt")
    speed_attr=$(python3 -c "print(f'{$speed/1e9:.4g}Gf')")
    sim_t=$(awk '/^flops/ {if (m == "" || $4 < m) m = $4} END {print m}' "$build/sim-flops.txt")
    nat_t=$(awk '/^flops/ {if (m == "" || $4 < m) m = $4} END {print m}' "$build/flops.txt")
    flops_check="the probe's sweeps took $(python3 -c "print(f'{$nat_t:.4f}')") s here (best of 30) and
       $(python3 -c "print(f'{$sim_t:.4f}')") s simulated (best of 30): simulated/measured $(python3 -c "print(f'{$sim_t/$nat_t:.3f}')")."
  else
    echo "$me: warning: the simulated check failed ($(head -2 "$build/sim.err")); the platform is written without it" >&2
  fi
fi
write_platform "$out" "$check"

echo "$me: wrote $out"
printf '  host speed  %s\n  latency     %s us one way (link %s)\n  bandwidth   %s GB/s\n  MPI_Test    %s s, MPI_Iprobe %s s\n  load        %s before, %s after\n' \
  "$speed_attr" "$(python3 -c "print(f'{$lat*1e6:.3f}')")" "$link_lat_attr" "$(python3 -c "print(f'{$bw/1e9:.3f}')")" "$test" "$iprobe" "$load_before" "$load_after"
echo "  flops check $flops_check" | tr -s ' \n' ' '; echo
[ -z "$check" ] || { echo "  one-way time per size and poll cost (measured, simulated):"; sed 's/^     //' "$check"; }
