#!/usr/bin/env bash
# Makes the Python venv the analysis scripts run in (harness/analysis/*.py:
# Thicket and Hatchet read mapp's Caliper export, Extra-P fits the scaling
# models): harness/analysis/requirements.txt from PyPI, every package pinned.
#   ci/analysis-venv.sh [DIR]     DIR: $MAPP_ANALYSIS_VENV, else build/analysis-venv
# Idempotent: a stamp file in the venv holds the hash of the requirements
# (and of the Python that made it); when it matches, nothing is done.
# Exit 2, with one line, when the venv cannot be made.
set -euo pipefail
me=ci/analysis-venv.sh
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-${MAPP_ANALYSIS_VENV:-$root/build/analysis-venv}}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
python="${MAPP_ANALYSIS_PYTHON:-python3}"
reqs="$root/harness/analysis/requirements.txt"
command -v "$python" >/dev/null || { echo "$me: no $python (install python3, python3-venv)" >&2; exit 2; }
[ -f "$reqs" ] || { echo "$me: no harness/analysis/requirements.txt" >&2; exit 2; }

hash="$( { "$python" -c 'import sys; print(sys.version)'; cat "$reqs"; } | sha256sum | cut -d' ' -f1)"
stamp="$venv/.mapp-analysis-stamp"
. "$root/ci/venv-lib.sh"
venv_fresh "$venv" "$stamp" "$hash"

echo "$me: making $venv (harness/analysis/requirements.txt)"
venv_create "$python" "$venv" "$stamp"
# The list is the whole venv (every dependency pinned), so --no-deps: pip
# brings nothing unlisted, in particular not extrap's GUI (PySide6).
log="$venv/.mapp-analysis-pip.log"
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$reqs" >"$log" 2>&1; then
  echo "$me: pip install -r harness/analysis/requirements.txt failed: $(grep -E '^ERROR' "$log" | tail -n1 | grep . || tail -n1 "$log")" >&2
  exit 2
fi
# pip check may name only extrap's PySide6-Essentials (its GUI's, left out on
# purpose); any other missing or conflicting requirement fails.
check="$("$venv/bin/python" -m pip check 2>&1 || true)"
bad="$(printf '%s\n' "$check" | grep -v -i -E '^(No broken requirements found\.|extrap [^ ]+ requires pyside6-essentials, which is not installed\.)$' | grep -v '^$' || true)"
if [ -n "$bad" ]; then
  echo "$me: pip check failed in $venv: $(printf '%s\n' "$bad" | head -n1)" >&2; exit 2
fi
# The command line works headless, without Qt.
if ! out="$(QT_QPA_PLATFORM=offscreen MPLBACKEND=Agg "$venv/bin/python" -c 'import thicket, hatchet, extrap.modelers.model_generator' 2>&1 >/dev/null)"; then
  echo "$me: the packages do not import in $venv: $(printf '%s\n' "$out" | tail -n1)" >&2; exit 2
fi
"$venv/bin/extrap" --version >/dev/null 2>&1 || { echo "$me: '$venv/bin/extrap --version' failed" >&2; exit 2; }
echo "$me: $venv holds $("$venv/bin/python" -m pip list --format=freeze 2>/dev/null | \
  grep -i -E '^(llnl-thicket|llnl-hatchet|extrap|pandas|numpy)==' | paste -sd' ')"
echo "$hash" > "$stamp"
