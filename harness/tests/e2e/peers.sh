#!/bin/bash
# The report's comparison of a mini-app with its peer: records of snapshots
# (memory/serial) and of a peer whose records say peer_of: snapshots, the
# same configuration and setting, give one row per timed phase (forward_s,
# adjoint_s) with the ratio of medians (app over peer), its interval and the
# reading; the mini-app 20 % faster reads "no slower", 30 % slower
# "SLOWER", and a peer record of another setting is not paired; the
# machine table's span leaves out a record that states no time; a run
# stopped at its time limit reads "timeout".
# usage: peers.sh
. "$(dirname "$0")/lib.sh"
require_app snapshots
"$MAPP_BIN_DIR/mapp-snapshots" --size tiny --variant memory --result template.json --quiet

# results DIR APP_FORWARD APP_ADJOINT: 7 runs a side, 2 % spread, both sides
# timed long enough to be read (0.5 s a timed phase).
results() {
  mkdir -p "$1"
  python3 - template.json "$1/results.jsonl" "$2" "$3" <<'PY'
import json, sys
tpl = json.loads(open(sys.argv[1]).read().splitlines()[-1])
fwd, adj = float(sys.argv[3]), float(sys.argv[4])
with open(sys.argv[2], "w") as out:
    for k in range(7):
        wobble = 1 + 0.02 * ((k * 3) % 7 - 3) / 3
        for app, f, a, setting in (("snapshots", fwd, adj, "so4"), ("snapshots-devito", 1.0, 1.2, "so4"),
                                   ("snapshots-devito", 0.1, 0.1, "so8")):
            r = json.loads(json.dumps(tpl))
            r["app"], r["setting"], r["exit_code"] = app, setting, 0
            # quiet runs, whatever the template's run met (a loaded machine would read disturbed)
            r["disturbance"].update(steal_fraction=0.0, run_delay_fraction=0.0)
            if k == 0 and app == "snapshots":
                del r["time"]  # a record that states no start time (the machine table must not say '?')
            if app != "snapshots":
                r["peer_of"] = "snapshots"
            r["app_data"]["forward_s"], r["app_data"]["adjoint_s"] = f * wobble, a * wobble
            r["timing"]["timed_s"] = r["timing"]["fastest_s"] = (f + a) * wobble
            r["phases"]["compute"] = {"max": (f + a) * wobble, "min": (f + a) * wobble, "mean": (f + a) * wobble}
            r["fom"]["value"] = 1e8 / ((f + a) * wobble)
            out.write(json.dumps(r) + "\n")
PY
}

results faster 0.8 0.96
expect_exit 0 "$MAPP" report faster
grep -q "## Against the production system each mini-app stands for" faster/report.md || fail "no peers section"
row=$(grep -F "| snapshots | snapshots-devito |" faster/report.md | grep forward_s) || fail "no forward row: $(cat faster/report.md)"
grep -qF "**0.80**" <<<"$row" || fail "forward ratio is not 0.80: $row"
grep -qF "no slower" <<<"$row" || fail "0.8x not read as no slower: $row"
grep -F "| snapshots | snapshots-devito |" faster/report.md | grep adjoint_s | grep -qF "**0.80**" || fail "adjoint ratio"
[ "$(grep -cF "| snapshots | snapshots-devito |" faster/report.md)" = 2 ] || fail "the so8 peer, with no app side, was paired"
echo "ok: 0.8x no slower: $row"
ran=$(grep -F "| ran |" faster/report.md) || fail "no 'ran' row in the machine table"
grep -qF "(20 of 21 records state a time)" <<<"$ran" && ! grep -qF "?" <<<"$ran" || fail "machine table: $ran"
echo "ok: $ran"

results slower 1.3 1.56
expect_exit 0 "$MAPP" report slower
row=$(grep -F "| snapshots | snapshots-devito |" slower/report.md | grep forward_s) || fail "no forward row"
grep -qF "**1.30**" <<<"$row" && grep -qF "SLOWER" <<<"$row" || fail "1.3x not read as SLOWER: $row"
echo "ok: 1.3x SLOWER: $row"

# A run stopped at its time limit: its row's verdict is "timeout" and it
# says the run timed out (not "noisy" and "1 of 1 failed").
mkdir -p limited
python3 - template.json limited/results.jsonl <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
r["setting"], r["exit_code"], r["outcome"] = "limited", 124, "timeout"
open(sys.argv[2], "w").write(json.dumps(r) + "\n")
PY
expect_exit 0 "$MAPP" report limited
row=$(grep -F "| memory [limited] |" limited/report.md) || fail "no row for the timed-out run: $(cat limited/report.md)"
grep -qF "| timeout |" <<<"$row" && grep -qF "1 of 1 timed out" <<<"$row" || fail "timed-out row: $row"
echo "ok: $row"
