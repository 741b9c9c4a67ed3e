"""Records for harness/tests/html.sh, made from one real record
(history-template.json) with its configuration, revision, time, repetition
and figure of merit replaced, so the test runs no app and takes a second:

  OUT/res/html-demo/   a results folder: heat mpi/serial and tasks/omp at 1,
                       2 and 4 ranks (weak), 3 repetitions each, the last
                       repetition of tasks/omp at 4 ranks failed (exit 1, its
                       verification failed) with a 30-line log; a spec.yaml
                       with a table; a host name made of HTML metacharacters
                       (system vm, the history's)
  OUT/history-*.jsonl  the history: mpi/serial n1 over 12 revisions with a
                       10 % slowdown from revision 6, n2 and n4 over the
                       last 6 revisions, flat; 3 repetitions each

usage: html_fixture.py TEMPLATE OUT
"""
import json
import os
import random
import sys

template_path, out = sys.argv[1], sys.argv[2]
template = json.load(open(template_path))
random.seed(29)
HOSTILE_HOST = "vm <script>alert(1)</script> & \"quoted\" 'single'"


def revision(k):
    return "%06xc0ffee" % (0x100000 + k)


def record(variant, backend, ranks, rep, rev, fom, when):
    r = json.loads(json.dumps(template))
    r.update(variant=variant, backend=backend, ranks=ranks, repetition=rep, git_revision=revision(rev),
             time=when, reference="mpi/serial", sweep="html-demo")
    r["key"] = "heat|%s|%s|n%d|t1|tiny|weak|r%d" % (variant, backend, ranks, rep)
    r["fom"] = dict(r["fom"], value=fom)
    stem = "res/html-demo/runs/heat-%s-%s-tiny-weak-n%d-t1-r%d" % (variant, backend, ranks, rep)
    r["log"] = stem + ".log"
    r["launch"] = ("mpirun -np %d --oversubscribe --bind-to none mapp-heat --variant %s --backend %s --size tiny "
                   "--scaling weak --result %s.json" % (ranks, variant, backend, stem))
    return r


def folder():
    os.makedirs(out + "/res/html-demo/runs", exist_ok=True)
    base = template["fom"]["value"]
    lines = []
    for variant, backend, speed in (("mpi", "serial", 1.0), ("tasks", "omp", 1.25)):
        for ranks in (1, 2, 4):
            for rep in range(3):
                r = record(variant, backend, ranks, rep, 11, base * speed * ranks * random.uniform(0.97, 1.03),
                           "2026-01-02T0%d:%02d:00Z" % (ranks, rep))
                r["host"] = HOSTILE_HOST
                r["system"] = "vm"  # as `system: vm` in the env file names it: the history's system
                if (variant, ranks, rep) == ("tasks", 4, 2):
                    r["exit_code"] = 1
                    r["verification"] = dict(r["verification"], status="fail", worst_error=0.5)
                    with open(out + "/" + r["log"], "w") as log:
                        log.writelines("log line %d of the failed run\n" % i for i in range(1, 31))
                lines.append(json.dumps(r))
    with open(out + "/res/html-demo/results.jsonl", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(out + "/res/html-demo/spec.yaml", "w") as f:
        f.write("""name: html-demo
description: synthetic heat records for the HTML test
runs:
  - app: heat
    variants: [mpi, tasks]
    backends: [serial, omp]
    ranks: [1, 2, 4]
    scaling: weak
plots:
  reference: {variant: mpi, backend: serial}
  tables:
    - name: by-ranks
      title: figure of merit per variant and rank count
      columns: [variant, backend, ranks, fom.value]
      value: fom.value
""")


def history():
    base = template["fom"]["value"]
    with open(out + "/history.jsonl", "w") as f:
        for ranks, first, step_at in ((1, 0, 6), (2, 6, 99), (4, 6, 99)):
            for k in range(first, 12):
                for rep in range(3):
                    fom = base * ranks * (0.9 if k >= step_at else 1.0) * random.uniform(0.995, 1.005)
                    r = record("mpi", "serial", ranks, rep, k, fom, "2026-01-01T%02d:%02d:00Z" % (k, rep))
                    f.write(json.dumps(r) + "\n")


folder()
history()
