"""Large results folders for harness/tests/summary.sh, made from one real
record (history-template.json), so the test runs no app:

  OUT/big/results.jsonl       N records: N/2 configurations of heat
                              mpi/serial (tiny, weak, 1 to N/2 ranks), 2
                              repetitions each; every second repetition
                              failed its verification (N/2 failed runs) and
                              no answer was compared with a baseline (N/2
                              unchecked configurations)
  OUT/old/results.jsonl,      N records each: N/5 configurations (heat
  OUT/new/results.jsonl       mpi/serial at 1 to N/5 ranks, a long setting),
                              5 repetitions of each; NEW's figures of merit
                              are 20 % lower, every configuration a
                              regression

usage: summary_fixture.py TEMPLATE OUT N
"""
import json
import os
import random
import sys

template_path, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
template = json.load(open(template_path))
random.seed(53)


def record(ranks, rep, fom, setting=None):
    r = json.loads(json.dumps(template))
    r.update(ranks=ranks, repetition=rep, setting=setting, label=setting, sweep="big")
    r["key"] = "heat|mpi|serial|n%d|t1|tiny|weak|r%d" % (ranks, rep) + ("|" + setting if setting else "")
    r["fom"] = dict(r["fom"], value=fom)
    r["log"] = "runs/heat-mpi-serial-tiny-weak-n%d-t1-r%d.log" % (ranks, rep)
    r["baseline"] = {"status": "none"}
    return r


def write(folder, records):
    os.makedirs(os.path.join(out, folder), exist_ok=True)
    with open(os.path.join(out, folder, "results.jsonl"), "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))


def big():
    base = template["fom"]["value"]
    records = []
    for c in range(n // 2):
        for rep in range(2):
            r = record(c + 1, rep, base * (c + 1) * random.uniform(0.97, 1.03))
            if rep == 1:
                r["exit_code"] = 1
                r["verification"] = dict(r["verification"], status="fail", worst_error=0.5)
            records.append(r)
    write("big", records)


def pair():
    base = template["fom"]["value"]
    setting = "steps-" + "x" * 60
    for folder, scale in (("old", 1.0), ("new", 0.8)):
        records = [record(c + 1, rep, base * scale * random.uniform(0.99, 1.01), setting)
                   for c in range(n // 5) for rep in range(5)]
        for r in records:
            r["timing"] = {"timed_s": 0.05}  # long enough to be trusted (verdict.h)
        write(folder, records)


big()
pair()
