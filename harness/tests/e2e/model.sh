#!/bin/bash
# mapp model on synthetic results whose timed phase follows a known law
# (3 % noise, a fixed seed, 2 repetitions at p = 1 ... 64): Extra-P, through
# `mapp export --format extrap` and harness/analysis/extrap_fit.py, gives the
# law back; records perturbed to another law give another leading term, so
# the check of the term can fail. Then the figures draw the model and the
# report names its term, and the refusals: too few rank counts, a missing
# venv, an unknown format, each one line and exit 2.
. "$(dirname "$0")/lib.sh"
python="${MAPP_ANALYSIS_VENV:-$MAPP_BIN_DIR/../analysis-venv}/bin/python"
[ -x "$python" ] || { echo "no analysis venv at $python (ci/analysis-venv.sh makes it): skipping"; exit 77; }

# synth DIR LAW [RANKS...]: results.jsonl of one heat mpi/serial weak series
synth() {
  mkdir -p "$1"
  python3 - "$@" <<'PY'
import json, math, random, sys
out, law, ranks = sys.argv[1], sys.argv[2], [int(p) for p in (sys.argv[3:] or "1 2 4 8 16 32 64".split())]
f = {"linear": lambda p: 2 + 0.5 * p, "plogp": lambda p: 1 + 0.1 * p * math.log2(p),
     "quadratic": lambda p: 1 + 0.01 * p * p}[law]
rng = random.Random(7)
with open(out + "/results.jsonl", "w") as fh:
    for p in ranks:
        for rep in range(2):
            t = f(p) * (1 + rng.uniform(-0.03, 0.03))
            fh.write(json.dumps({"schema": "mapp-result/1", "app": "heat", "variant": "mpi", "backend": "serial",
                "size": "tiny", "scaling": "weak", "case": "tiny", "ranks": p, "threads": 1, "gpus": 0, "steps": 20,
                "exit_code": 0, "repetition": rep, "key": f"heat|mpi|serial|n{p}|t1|tiny|weak|r{rep}",
                "timing": {"fastest_s": t}, "wall_s": t + 0.1,
                "phases": {"setup": {"max": 0.1, "min": 0.1, "mean": 0.1}, "compute": {"max": t, "min": t, "mean": t},
                           "communication": {"max": 0.0, "min": 0.0, "mean": 0.0}, "io": {"max": 0.0, "min": 0.0, "mean": 0.0}},
                "fom": {"name": "cell-updates/s", "value": 12000.0 * p / t}}) + "\n")
PY
}
# leading DIR: its series' timed-phase model's leading term
leading() { python3 -c "import json,sys; m=[x for x in json.load(open(sys.argv[1]))['models'] if x['callpath']=='timed']; print(m[0]['leading'])" "$1/models.json"; }

synth lin linear
expect_exit 0 "$MAPP" model lin --fit-max-ranks 64 --predict-to 1024
expect_output "heat mpi/serial tiny weak t1"
expect_output "p=1024:"
[ "$(leading lin)" = p ] || fail "2 + 0.5 p came back as $(leading lin)"
python3 - lin/models.json <<'PY' || fail "the linear model's coefficients are off"
import json, sys
m = [x for x in json.load(open(sys.argv[1]))["models"] if x["callpath"] == "timed"][0]
slope = m["terms"][0]["coefficient"]
assert abs(slope - 0.5) < 0.05 and abs(m["constant"] - 2) < 0.5, (m["constant"], slope)
assert m["predictions"]["1024"] > 450, m["predictions"]
PY

synth plogp plogp
expect_exit 0 "$MAPP" model plogp
[ "$(leading plogp)" = "p * log2(p)" ] || fail "1 + 0.1 p log2 p came back as $(leading plogp)"

# the same check on records of another law fails
synth quad quadratic
expect_exit 0 "$MAPP" model quad
[ "$(leading quad)" != p ] || fail "records following 1 + 0.01 p^2 still read as linear"
echo "1 + 0.01 p^2 reads as $(leading quad), not p"

# the figures draw the model, the report names its term and the phase
# that carries it (the synthetic records' time is all compute)
expect_exit 0 "$MAPP" plot lin
grep -q "model (Extra-P)" lin/plots/heat-weak-efficiency.gp || fail "the weak-efficiency figure draws no model"
expect_exit 0 "$MAPP" report lin
grep -q "mpi/serial tiny weak t1 grows as p" lin/report.md || fail "the report does not name the model's leading term"
grep -q "grows as p ([^)]*), driven by compute (as p:" lin/report.md || fail "the report does not name the phase that grows"

# refusals: one line on stderr, exit 2
refused() { # WHAT CMD...: exit 2 with one error line containing WHAT
  local what=$1 err got=0
  shift
  err=$("$@" 2>&1 >/dev/null) || got=$?
  [ "$got" = 2 ] || fail "'$*' exited $got, expected 2"
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { printf '%s\n' "$err" >&2; fail "'$*' printed more than one line"; }
  grep -qF -- "$what" <<<"$err" || fail "'$*' said '$err', not '$what'"
}
synth few linear 1 2 4 8
refused "too few rank counts for a fit" "$MAPP" model few
refused "has no bin/python" env MAPP_ANALYSIS_VENV="$PWD/none" "$MAPP" model lin
refused "unknown value 'cube'" "$MAPP" export lin --format cube --out x
refused "too few rank counts for an Extra-P model" "$MAPP" export few --format extrap --out x
echo "ok: linear and p log2 p laws given back, a quadratic one told apart, refusals one line each"
