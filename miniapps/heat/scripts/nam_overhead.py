#!/usr/bin/env python3
"""Snapshot overhead of the heat variants, measured where it lives.

Overhead = 1 - rate with snapshots / rate without (cell-updates/s of the
solve), for mpi, forkjoin and tasks, snapshots every 20, 5 and 1 timesteps,
on 1, 2 and 4 compute ranks, with the NAM region in a file (--nam-mode file)
or on a memory rank (--nam-mode rank, one more MPI rank), with and without
the compute ranks' CRC-32. Each round runs every configuration once, its
snapshot-free run first, so a round's ratios share the machine's state; a
configuration's overhead is the median over rounds, with the interval from
the smallest to the largest round (a distribution-free interval for the
median: 94 % with 5 rounds, 98 % with 7).

With --simulated PLATFORM, BUILD_BIN is the simulated build's (build-sim/bin)
and every run is SimGrid SMPI on envs/platforms/PLATFORM, one rank a node
(the memory rank on a node of its own): `mpi` only (the other variants run
threads, which SMPI does not simulate), on 1 to 64 compute ranks, every 20
and 5 timesteps (every 1 would hold 12.8 GB of region in the one simulating
process at 64 ranks).

With --threads N, forkjoin and tasks run N threads a rank (mpi 1): the goal
of hiding the snapshots needs cores beside the blocks' (2 ranks x N + 1).

usage: nam_overhead.py BUILD_BIN OUT_DIR [--rounds N] [--quick] [--simulated PLATFORM] [--threads N]
Prints a Markdown table; every record is kept in OUT_DIR/records.jsonl.
"""
import argparse, itertools, json, os, statistics, subprocess, sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_osc="^pt2pt", OMP_WAIT_POLICY="passive")
# per compute rank: 512 x 1024 (a 4 MiB snapshot), blocks of 128, 50 timesteps
GRID = ["--rows", "512", "--cols", "1024", "--block-rows", "128", "--block-cols", "128", "--steps", "50",
        "--scaling", "weak"]
BACKEND = {"mpi": "serial", "forkjoin": "omp", "tasks": "omp"}


SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def configurations(quick, simulated):
    """(every, mode, checksum) of the snapshot runs."""
    runs = [(e, m, c) for e in ((20, 5) if simulated else (20, 5, 1)) for m, c in (("file", "crc32"), ("rank", "none"))]
    runs += [(5, "file", "none"), (5, "rank", "crc32")]
    return runs[:2] if quick else runs


def launcher(platform, ranks):
    if platform:
        return [os.path.join(SOURCE, "envs", "sim", "smpirun-wrapper.sh"), "--platform", platform, "-np", str(ranks)]
    return ["mpirun", "-q", "-np", str(ranks)]


def run(binary, out, variant, ranks, snap, platform, threads):
    args = ["--variant", variant, "--backend", BACKEND[variant], *GRID, "--threads",
            str(threads if BACKEND[variant] == "omp" else 1), "--quiet"]
    launch = ranks
    if snap:
        every, mode, checksum = snap
        args += ["--snapshot-every", str(every), "--nam", os.path.join(out, "region.nam"), "--nam-mode", mode,
                 "--nam-checksum", checksum]
        launch += mode == "rank"
    result = os.path.join(out, "one.json")
    if os.path.exists(result):
        os.remove(result)
    subprocess.run([*launcher(platform, launch), os.path.join(binary, "mapp-heat"), *args,
                    "--result", result], env=ENV, check=True, timeout=300)
    record = json.loads(open(result).readline())
    record["snapshot"] = snap
    with open(os.path.join(out, "records.jsonl"), "a") as keep:
        keep.write(json.dumps(record) + "\n")
    return record["fom"]["value"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bin")
    p.add_argument("out")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="two configurations, 1 and 2 ranks (a check of the script)")
    p.add_argument("--simulated", metavar="PLATFORM", help="SimGrid SMPI on envs/platforms/PLATFORM (mpi only)")
    p.add_argument("--threads", type=int, default=1,
                   help="threads a rank of forkjoin and tasks (mpi has 1): more where the cores are there")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    ranks_list = (1, 2) if a.quick else (1, 2, 4, 8, 16, 32, 64) if a.simulated else (1, 2, 4)
    variants = ("mpi",) if a.simulated else tuple(BACKEND)
    snaps = configurations(a.quick, a.simulated)
    overhead = {}
    for _ in range(a.rounds):
        for variant, ranks in itertools.product(variants, ranks_list):
            base = run(a.bin, a.out, variant, ranks, None, a.simulated, a.threads)
            for snap in snaps:
                rate = run(a.bin, a.out, variant, ranks, snap, a.simulated, a.threads)
                overhead.setdefault((variant, ranks, snap), []).append(1.0 - rate / base)
    print("| variant | compute ranks | every | NAM mode | checksum | overhead (median) | interval (min-max of rounds) |")
    print("|---|--:|--:|---|---|--:|---|")
    for (variant, ranks, (every, mode, checksum)), v in overhead.items():
        print(f"| {variant} | {ranks} | {every} | {mode} | {checksum} | {100 * statistics.median(v):.0f} % "
              f"| [{100 * min(v):.0f}, {100 * max(v):.0f}] % |")


if __name__ == "__main__":
    sys.exit(main())
