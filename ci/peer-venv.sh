#!/usr/bin/env bash
# Makes the Python venv the peers run in (Devito for snapshots, ...): one venv,
# every miniapps/*/peer/requirements.txt installed into it from PyPI.
#   ci/peer-venv.sh [DIR]     DIR: $MAPP_PEERS_VENV, else build/peers-venv
# Idempotent: a stamp file in the venv holds the hash of the requirements
# (and of the Python that made it); when it matches, nothing is done.
set -euo pipefail
me=ci/peer-venv.sh
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-${MAPP_PEERS_VENV:-$root/build/peers-venv}}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
python="${MAPP_PEERS_PYTHON:-python3}"
command -v "$python" >/dev/null || { echo "$me: no $python (install python3, python3-venv)" >&2; exit 2; }

reqs=()
while IFS= read -r f; do reqs+=("$f"); done < <(cd "$root" && ls miniapps/*/peer/requirements.txt 2>/dev/null | sort)
if [ ${#reqs[@]} -eq 0 ]; then echo "$me: no miniapps/*/peer/requirements.txt" >&2; exit 2; fi

hash="$( { "$python" -c 'import sys; print(sys.version)'; for f in "${reqs[@]}"; do echo "== $f"; cat "$root/$f"; done; } | sha256sum | cut -d' ' -f1)"
stamp="$venv/.mapp-peers-stamp"
. "$root/ci/venv-lib.sh"
venv_fresh "$venv" "$stamp" "$hash"

echo "$me: making $venv (${reqs[*]})"
venv_create "$python" "$venv" "$stamp"
args=()
for f in "${reqs[@]}"; do args+=(-r "$root/$f"); done
"$venv/bin/python" -m pip install -q "${args[@]}"
# A venv whose requirements conflict is not made (no stamp); then what it holds.
"$venv/bin/python" -m pip check >/dev/null || { echo "$me: pip check failed in $venv" >&2; exit 1; }
names=$(cat "${reqs[@]/#/$root/}" | sed -e 's/#.*//' -e 's/[<>=!~;[ ].*//' | grep -v '^$' | sort -u | paste -sd' ')
echo "$me: $venv holds $("$venv/bin/python" -m pip list --format=freeze 2>/dev/null | \
  grep -i -E "^($(echo "$names" | tr ' ' '|'))==" | paste -sd' ')"
echo "$hash" > "$stamp"
