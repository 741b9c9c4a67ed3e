#!/usr/bin/env bash
# Stops the private cluster of ci/slurm/start.sh: cancels its jobs, asks
# slurmctld to shut itself and the slurmds down, then ends whatever is left
# of it (its daemons, stray slurmstepd) and its munged. Only processes of this
# cluster are touched: daemons whose command line names the state folder,
# slurmstepd and slurmscriptd whose environment names its slurm.conf. Safe to run when
# nothing is running. The state folder (logs) is kept for inspection;
# start.sh wipes it.
#   MAPP_SLURM_DIR   state folder (default /tmp/mapp-slurm)
#   --quiet          say nothing when there was nothing to stop
set -uo pipefail

DIR=${MAPP_SLURM_DIR:-/tmp/mapp-slurm}
CONF=$DIR/slurm.conf
quiet=false
[ "${1:-}" = --quiet ] && quiet=true

# ours PID: alive and one of this cluster's processes.
ours() {
  local pid=$1 comm
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  case "$comm" in
    slurmctld | slurmd | munged) tr "\\0" " " 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$DIR/" ;;
    slurmstepd | slurmscriptd) tr "\\0" "\\n" 2>/dev/null <"/proc/$pid/environ" | grep -qxF -- "SLURM_CONF=$CONF" ;;
    *) return 1 ;;
  esac
}

# Our processes now: the pid files, then a scan for what they do not name.
our_pids() {
  local f pid p
  for f in "$DIR/slurmctld.pid" "$DIR"/n*/slurmd.pid "$DIR/munge/munged.pid"; do
    [ -f "$f" ] || continue
    pid=$(tr -dc 0-9 <"$f")
    ours "$pid" && echo "$pid"
  done
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    case "$(cat "$p/comm" 2>/dev/null)" in
      slurmctld | slurmd | slurmstepd | slurmscriptd | munged) ours "$pid" && echo "$pid" ;;
    esac
  done | sort -un
}

# wait_gone SECONDS PIDS...: true when every PID has exited in time.
wait_gone() {
  local limit=$1 t=0 pid alive
  shift
  while :; do
    alive=0
    for pid in "$@"; do ours "$pid" && alive=1; done
    [ $alive = 0 ] && return 0
    [ $t -ge $((limit * 5)) ] && return 1
    sleep 0.2
    t=$((t + 1))
  done
}

pids=$(our_pids | tr '\n' ' ')
if [ -z "$pids" ]; then
  $quiet || echo "slurm: nothing running for $DIR"
  exit 0
fi

# The orderly way first, while slurmctld and munged are up.
if [ -f "$CONF" ] && command -v scontrol >/dev/null; then
  export SLURM_CONF=$CONF
  jobs=$(timeout 10 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  [ -n "${jobs// /}" ] && timeout 10 scancel $jobs 2>/dev/null
  timeout 10 scontrol shutdown >/dev/null 2>&1
fi
slurm_pids=()
munge_pids=()
for pid in $pids; do
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = munged ]; then munge_pids+=("$pid"); else slurm_pids+=("$pid"); fi
done
if [ ${#slurm_pids[@]} -gt 0 ] && ! wait_gone 10 "${slurm_pids[@]}"; then
  for pid in "${slurm_pids[@]}"; do ours "$pid" && kill -TERM "$pid" 2>/dev/null; done
  if ! wait_gone 5 "${slurm_pids[@]}"; then
    for pid in "${slurm_pids[@]}"; do ours "$pid" && kill -KILL "$pid" 2>/dev/null; done
  fi
fi
# Step daemons started while we waited, if any.
for pid in $(our_pids); do
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = munged ] || kill -KILL "$pid" 2>/dev/null
done
for pid in "${munge_pids[@]}"; do ours "$pid" && kill -TERM "$pid" 2>/dev/null; done
if [ ${#munge_pids[@]} -gt 0 ] && ! wait_gone 5 "${munge_pids[@]}"; then
  for pid in "${munge_pids[@]}"; do ours "$pid" && kill -KILL "$pid" 2>/dev/null; done
fi
left=$(our_pids | tr '\n' ' ')
if [ -n "$left" ]; then
  echo "ci/slurm/stop.sh: processes still running: $left" >&2
  exit 1
fi
$quiet || echo "slurm: stopped ($DIR)"
exit 0
