"""What every peer of a mini-app (a production system run beside it, such
as Devito beside snapshots and GT4Py beside stencil) needs to keep the
mapp contract (docs/contract.md) in Python, as libmapp gives it to the C
apps: exit codes, the refusal of bad input in one line, option values
parsed as mapp_cli parses them, the launcher's rank and size, the
machine's state and what disturbed a timed phase (mapp_machine.c,
mapp_disturb.c), the revision, and HDF5 attributes as libmapp writes them.

A peer's script imports it from miniapps/common/peer/ (the launcher runs
the script in place, so the path is the source tree's)."""
import json
import math
import os
import resource
import subprocess
import sys
import time

EXIT_VERIFY, EXIT_INPUT, EXIT_SYSTEM = 1, 2, 3

# Option kinds (the metavar --help shows) and what a non-default value of
# an option changes: nothing, the answer (no baseline case), or the size.
LONG, DOUBLE, STRING, CHOICE, FLAG = "N", "X", "VALUE", "choice", "flag"
NOTHING, ANSWER, SIZE = 0, 1, 2


class Refusal(Exception):
    """Bad input or a system failure: one line on stderr and its exit code."""

    def __init__(self, message, code=EXIT_INPUT):
        super().__init__(message)
        self.code = code

def now():
    return time.perf_counter()

def parse_long(o, text):
    try:
        if not text or text.strip() != text or not text.lstrip("+-").isdigit():
            raise ValueError
        v = int(text, 10)
        if not -(1 << 63) <= v < (1 << 63):
            raise ValueError
    except ValueError:
        raise Refusal(f"--{o['name']}: expected an integer, got '{text}'")
    if v < o["lo"] or v > o["hi"]:
        raise Refusal(f"--{o['name']}: {v} is outside [{o['lo']}, {o['hi']}]")
    return v

def parse_double(o, text):
    try:
        if not text or text.strip() != text:
            raise ValueError
        v = float(text)
        if not math.isfinite(v):
            raise ValueError
    except ValueError:
        raise Refusal(f"--{o['name']}: expected a finite number, got '{text}'")
    if v < o["lo"] or v > o["hi"]:
        raise Refusal(f"--{o['name']}: {v:g} is outside [{o['lo']:g}, {o['hi']:g}]")
    return v

def parse_value(o, text):
    if o["kind"] == LONG:
        return parse_long(o, text)
    if o["kind"] == DOUBLE:
        return parse_double(o, text)
    if o["kind"] == STRING:
        if text == "":
            raise Refusal(f"--{o['name']}: empty value")
        return text
    if text not in o["choices"].split("|"):
        raise Refusal(f"--{o['name']}: unknown value '{text}' (choose one of {o['choices']})")
    return text

def opt(name, kind, help, default=None, lo=None, hi=None, choices=None, default_text=None, changes=NOTHING,
        preset=None, refused=False, noop=None):
    """One row of a peer's option table: the mini-app's flag, its range or choices, what --help says of
    its default, what a non-default value changes, the preset field it overrides, and whether the peer
    refuses it (refused) or accepts only the value that asks for what it does (noop)."""
    return dict(name=name, kind=kind, help=help, default=default, lo=lo, hi=hi, choices=choices,
                default_text=default_text, changes=changes, preset=preset, refused=refused, noop=noop)


def common_options(backend_help, variant_help, variant_default, variants, min_time_help):
    """The rows every mini-app has (mapp_app.c's common rows), in its order, with the peer's words for
    what its backend, variant and --min-time mean."""
    return [
        opt("backend", CHOICE, backend_help, "serial", choices="serial|omp"),
        opt("variant", CHOICE, variant_help, variant_default, choices="|".join(variants)),
        opt("size", CHOICE, "problem size preset", "tiny", choices="tiny|small|medium|large"),
        opt("scaling", CHOICE, "weak: the size is per rank; strong: the size is global", "strong",
            choices="weak|strong"),
        opt("steps", LONG, "time steps", lo=1, hi=1000000000, default_text="from --size", changes=ANSWER,
            preset="steps"),
        opt("threads", LONG, "OpenMP threads on the omp backend (0: OMP_NUM_THREADS, else the CPUs); 1 on serial",
            0, lo=0, hi=4096),
        opt("output", STRING, "write the answer fields to this HDF5 file"),
        opt("result", STRING, "write the JSON result record to this file"),
        opt("list", FLAG, "print the variants and backends of this program as JSON and exit"),
        opt("quiet", FLAG, "do not print the summary line and the machine's warnings"),
        opt("min-time", DOUBLE, min_time_help, 0.0, lo=0.0, hi=1e6),
        opt("print-case", FLAG, "print the baseline case these options answer (the size preset's, or none: a "
            "custom problem) and the record's size, then exit without running"),
        opt("weak-ranks", LONG, "with --scaling weak: solve the global problem of this many ranks (its case is "
            "tiny-weakN); 0: the ranks that run (1: the peer runs on one rank)", 0, lo=0, hi=1 << 24),
    ]


def print_help(prog, summary, options, aliases=None):
    """--help as the mini-apps print it: one line per option with its default and what it changes,
    then each alias (another name: the option's name, as parse_line takes them)."""
    print(f"usage: {prog} [options]\n{summary}\n\noptions:")
    for o in options:
        meta = "" if o["kind"] == FLAG else o["choices"] if o["choices"] else o["kind"]
        head = f"--{o['name']}" + (f" {meta}" if meta else "")
        line = f"  {head:<34} {o['help']}"
        if o["default_text"]:
            line += f" (default {o['default_text']})"
        elif o["kind"] == LONG:
            line += f" (default {o['default'] or 0})"
        elif o["kind"] == DOUBLE:
            line += f" (default {o['default'] or 0:g})"
        elif o["kind"] in (STRING, CHOICE):
            line += f" (default {o['default'] or 'none'})"
        if o["changes"] and not o["refused"]:
            line += " [changes the %s]" % ("size" if o["changes"] == SIZE else "answer")
        print(line)
    for name, target in (aliases or {}).items():
        print(f"  {'--' + name:<34} another name for --{target}")
    print(f"  {'--help':<34} print this help and exit")


def parse_line(argv, options, show_help, aliases=None, refuse_value=None):
    """(values, given) as the mini-app's parser (mapp_cli.c) reads a line; None when --help was printed
    (show_help()). aliases maps another name to an option's; refuse_value(name, text) raises a Refusal
    for a value the mini-app takes and the peer cannot, before the value is parsed."""
    by_name = {o["name"]: o for o in options}
    values = {o["name"]: o["default"] for o in options}
    given = set()
    done = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if done or not arg.startswith("--") or arg == "--":
            if not done and arg == "--":
                done = True
                continue
            raise Refusal(f"unexpected argument '{arg}' (see --help)")
        if arg == "--help":
            show_help()
            return None
        name, eq, text = arg[2:].partition("=")
        name = (aliases or {}).get(name, name)
        o = by_name.get(name)
        if o is None:
            raise Refusal(f"unknown option '--{name}' (see --help)")
        given.add(name)
        if o["kind"] == FLAG:
            if eq:
                raise Refusal(f"--{name} takes no value")
            values[name] = True
            continue
        if not eq:
            if i >= len(argv):
                raise Refusal(f"--{name} needs a value")
            text = argv[i]
            i += 1
        if refuse_value:
            refuse_value(name, text)
        values[name] = parse_value(o, text)
    return values, given


def launcher_env(names):
    for n in names:
        v = os.environ.get(n, "")
        if v.strip():
            try:
                return int(v)
            except ValueError:
                pass
    return None

def launcher_rank():
    return launcher_env(["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"]) or 0

def launcher_size():
    return launcher_env(["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"]) or 1

def read_first_line(path):
    try:
        with open(path) as f:
            return f.readline().rstrip("\n")
    except OSError:
        return None

def cpuinfo(key):
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == key:
                    return v.strip()
    except OSError:
        pass
    return None

def machine_json():
    gov = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    smt = read_first_line("/sys/devices/system/cpu/smt/active")
    thp = read_first_line("/sys/kernel/mm/transparent_hugepage/enabled")
    if thp and "[" in thp:
        thp = thp.split("[", 1)[1].split("]", 1)[0]
    boost = None
    b = read_first_line("/sys/devices/system/cpu/cpufreq/boost")
    if b is not None:
        boost = b.strip() != "0"
    else:
        b = read_first_line("/sys/devices/system/cpu/intel_pstate/no_turbo")
        boost = None if b is None else b.strip() == "0"
    hyper = read_first_line("/sys/hypervisor/type")
    if not hyper and " hypervisor" in (cpuinfo("flags") or ""):
        hyper = read_first_line("/sys/class/dmi/id/sys_vendor") or "unknown"
    mhz = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
    mhz = float(mhz) / 1e3 if mhz else float(cpuinfo("cpu MHz") or 0.0)
    warnings = []
    if gov and gov != "performance":
        warnings.append(f"CPU frequency scaling is on (governor '{gov}'): the clock moves with load, and "
                        "real-time figures with it")
    if boost:
        warnings.append("CPU boost (turbo) is on: the clock depends on load and temperature")
    if hyper:
        warnings.append(f"a virtual machine ({hyper}): the hypervisor may steal CPU time; each record says how "
                        "much it stole while timed")
    if thp == "always":
        warnings.append("transparent huge pages 'always': page faults and compaction vary from run to run")
    return {"cpu_model": cpuinfo("model name"), "cpus": os.cpu_count(), "mhz": mhz, "governor": gov,
            "boost": boost, "smt": None if smt is None else smt.strip() != "0", "hypervisor": hyper,
            "kernel": os.uname().release, "transparent_hugepages": thp, "warnings": warnings}

def disturb_sample():
    """What libmapp's mapp_disturb_sample_take reads: load, CPU ticks and
    steal, this process's threads' run delay and migrations, involuntary
    switches."""
    s = {"when": now(), "load": -1.0, "ticks": (-1, -1), "on_cpu": 0, "waiting": 0, "migrations": 0,
         "involuntary": resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw}
    try:
        s["load"] = float(read_first_line("/proc/loadavg").split()[0])
        v = [int(x) for x in read_first_line("/proc/stat").split()[1:9]]
        s["ticks"] = (sum(v), v[7])
    except (AttributeError, ValueError, IndexError):
        pass
    try:
        for tid in os.listdir("/proc/self/task"):
            st = read_first_line(f"/proc/self/task/{tid}/schedstat")
            if st:
                on, wait = st.split()[:2]
                s["on_cpu"] += int(on)
                s["waiting"] += int(wait)
            try:
                with open(f"/proc/self/task/{tid}/sched") as f:
                    for line in f:
                        if line.startswith("se.nr_migrations"):
                            s["migrations"] += int(line.split(":")[1])
            except OSError:
                pass
    except OSError:
        pass
    return s

def disturbance(a, b):
    all_ticks, stolen = b["ticks"][0] - a["ticks"][0], b["ticks"][1] - a["ticks"][1]
    known = a["ticks"][0] >= 0 and b["ticks"][0] >= 0
    on, waiting = b["on_cpu"] - a["on_cpu"], b["waiting"] - a["waiting"]
    return {"interval_s": b["when"] - a["when"],
            "steal_fraction": (stolen / all_ticks if all_ticks > 0 else 0.0) if known else None,
            "steal_ticks": stolen if known else 0, "cpu_ticks": all_ticks if known else 0,
            "run_delay_fraction": waiting / (on + waiting) if on + waiting > 0 else 0.0,
            "run_delay_s": 1e-9 * waiting if waiting > 0 else 0.0,
            "involuntary_switches": b["involuntary"] - a["involuntary"],
            "migrations": b["migrations"] - a["migrations"],
            "load_before": a["load"] if a["load"] >= 0 else None, "load_after": b["load"] if b["load"] >= 0 else None}

def peer_threads(values):
    """The threads a run uses, as libmapp's mapp_set_threads: on omp
    --threads (0: OMP_NUM_THREADS, else every CPU), 1 on every other backend."""
    if values["backend"] != "omp":
        return 1
    t = values["threads"]
    if t <= 0:
        env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        t = int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)
    return t


class TimedRepeats:
    """What repeat_timed measured: each iteration's seconds and its detail,
    the fastest timed one (best), the record's timing and disturbance, and
    how many repeated answers differ from the first (None: not repeated)."""

    def __init__(self, seconds, details, best, timing, disturbance, differ):
        self.seconds, self.details, self.best = seconds, details, best
        self.timing, self.disturbance, self.differ = timing, disturbance, differ


def repeat_timed(min_time, once, digest, reset=None):
    """As mapp_app.c's run_compute: once() (the timed phase, returning its
    seconds and a detail of the peer's) runs once, or with --min-time until
    the timed iterations (all but the first, a warm-up) last min_time
    together, reset() (timed apart) before each repeat; digest() after each
    repeated iteration, so the repeats are held to the first's answer bit
    for bit. The figure is the fastest timed iteration."""
    seconds, details, digests, resets = [], [], [], 0.0
    before, after_first = disturb_sample(), None
    while True:
        if seconds and reset:
            t0 = now()
            reset()
            resets += now() - t0
        s, detail = once()
        seconds.append(s)
        details.append(detail)
        if min_time > 0:
            digests.append(digest())
        if after_first is None:
            after_first = disturb_sample()
        if min_time <= 0 or len(seconds) >= 1000000:
            break
        if (seconds[0] if len(seconds) == 1 else sum(seconds[1:])) >= min_time:
            break
    end = disturb_sample()
    warmup = len(seconds) > 1
    timed = seconds[1:] if warmup else seconds
    best = (1 if warmup else 0) + min(range(len(timed)), key=lambda i: timed[i])
    timing = {"min_time_s": min_time, "iterations": len(seconds), "warmup": warmup,
              "timed_iterations": len(timed), "timed_s": sum(timed), "fastest_s": seconds[best],
              "mean_s": sum(timed) / len(timed), "reset_s": resets, "seconds": seconds}
    differ = sum(1 for d in digests if d != digests[0]) if warmup else None
    return TimedRepeats(seconds, details, best, timing, disturbance(after_first if warmup else before, end), differ)


def git_revision():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "describe", "--always", "--dirty", "--abbrev=12"],
                             capture_output=True, text=True, timeout=20)
        rev = out.stdout.strip()
        return rev if out.returncode == 0 and rev else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"

def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

def attr_string(h5py, obj, name, text):
    """A fixed-length, null-terminated ASCII attribute, as libmapp writes them."""
    import numpy as np
    data = text.encode("ascii", "replace")
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(len(data) + 1)
    tid.set_strpad(h5py.h5t.STR_NULLTERM)
    space = h5py.h5s.create(h5py.h5s.SCALAR)
    aid = h5py.h5a.create(obj.id, name.encode(), tid, space)
    aid.write(np.array(data, dtype=f"S{len(data) + 1}"), mtype=tid)

def write_provenance(h5py, np, f, app, variant, build_type, peer):
    """The answer file's attributes as libmapp writes them: what ran, where
    from and how, then its ranks, threads and steps."""
    c = peer.c
    provenance = {"app": app, "variant": variant, "backend": peer.backend, "size": c["size"],
                  "scaling": peer.values["scaling"], "case": c["case"] or "", "git_revision": peer.git,
                  "compiler": peer.compiler_text, "flags": peer.flags_text, "build_type": build_type,
                  "date": utc_now(), "command": " ".join(peer.argv)}
    for k, s in provenance.items():
        attr_string(h5py, f, k, s)
    for k, v in (("ranks", 1), ("threads", peer.threads), ("steps", c["nt"])):
        f.attrs.create(k, np.int64(v), dtype=np.int64)

def system_errno(e):
    import errno
    return EXIT_SYSTEM if getattr(e, "errno", None) in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG) \
        else EXIT_INPUT

def mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_writable(path, flag="--output"):
    """Refuse a file that cannot be created before computing for minutes."""
    if os.path.isdir(path):
        raise Refusal(f"{flag} {path} is a folder, not a file")
    parent = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(parent):
        raise Refusal(f"{flag} {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise Refusal(f"{flag} {path}: not writable")


def check_outputs(values):
    """The answer file and the result record a run will write, refused
    before the run when they cannot be created (a cold JIT build takes
    minutes before the end of the run would find out)."""
    for flag in ("output", "result"):
        if values.get(flag):
            check_writable(values[flag], "--" + flag)


def write_record(path, rec):
    """The result record as one JSON line at --result (when given)."""
    if not path:
        return
    try:
        with open(path, "w") as f:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    except OSError as e:
        raise Refusal(f"cannot write result record '{path}': {e.strerror or e}", system_errno(e))


def print_repeats_and_warnings(prog, rec, timing):
    """After a run's summary line: what --min-time repeated (timing is None where nothing was
    timed, as in a build alone), then the machine's warnings on stderr."""
    t = timing
    if t and t["iterations"] > 1:
        print(f"  timed phase run {t['iterations']} times (--min-time {t['min_time_s']:g} s): the figure is "
              f"the fastest of the last {t['timed_iterations']} ({t['fastest_s']:.4g} s), their mean "
              f"{t['mean_s']:.4g} s, {t['timed_s']:.4g} s in all")
    sys.stdout.flush()
    for w in rec["machine"]["warnings"]:
        print(f"{prog}: warning: {w}", file=sys.stderr)


def run_main(prog, body):
    """body() under the contract's exits: a refusal is one line and its code, anything the peer's
    framework raises (a compiler missing, a failed compile) one line and EXIT_SYSTEM."""
    try:
        return body()
    except Refusal as e:
        sys.stdout.flush()
        print(f"{prog}: error: {e}", file=sys.stderr)
        return e.code
    except MemoryError:
        print(f"{prog}: error: out of memory", file=sys.stderr)
        return EXIT_SYSTEM
    except BrokenPipeError:  # a reader that stopped early (--help | head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{prog}: error: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if os.environ.get("MAPP_DEBUG", "") not in ("", "0"):
            import traceback
            traceback.print_exc()
        first = (str(e).strip().splitlines() or [""])[0]
        print(f"{prog}: error: {type(e).__name__}: {first}", file=sys.stderr)
        return EXIT_SYSTEM


def contract_main(prog, argv, parse, list_json, configure, one_rank_why, start, check=None):
    """A peer's main in the contract's order: the line (parse: (values, given), None after --help),
    --list answered without a run (by the launcher's first rank), the configuration
    (configure(values, given), refusing what the peer cannot honour), --print-case, check(config)
    where given, one rank only (one_rank_why says why), then start(values, config): its exit code."""

    def body():
        parsed = parse(argv)
        if parsed is None:
            return 0
        values, given = parsed
        if values["list"]:
            if launcher_rank() == 0:
                print(json.dumps(list_json(), separators=(",", ":")))
            return 0
        config = configure(values, given)
        if values["print-case"]:
            print(f"case={config['case'] or 'none'} size={config['size']}")
            return 0
        if check:
            check(config)
        ranks = launcher_size()
        if ranks > 1:
            if launcher_rank() != 0:
                return EXIT_INPUT
            raise Refusal(f"{ranks} MPI ranks: {one_rank_why}; run it without a launcher")
        return start(values, config)

    return run_main(prog, body)


class CompilerOutput:
    """The compilers' chatter (a JIT's builds print warnings on the
    process's stdout and stderr) into a log file, so a run prints its
    summary line only; a failed build's error line names the log."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        os.makedirs(os.path.dirname(self.log), exist_ok=True)
        self.fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.saved = (os.dup(1), os.dup(2))
        os.dup2(self.fd, 1)
        os.dup2(self.fd, 2)
        return self

    def __exit__(self, kind, value, tb):
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in (*self.saved, self.fd):
            os.close(fd)
        if kind is not None and issubclass(kind, Exception) and not isinstance(value, Refusal):
            first = (str(value).strip().splitlines() or [""])[0]
            raise Refusal(f"{type(value).__name__}: {first} (the compilers' output: {self.log})", EXIT_SYSTEM) \
                from value
        return False


def dims_create(n):
    """MPI_Dims_create(n, 2): the most balanced factors, larger first."""
    best = (n, 1)
    for a in range(1, int(math.isqrt(n)) + 1):
        if n % a == 0:
            best = (n // a, a)
    return best


def finish_run(prog, peer, out, summary):
    """The end of a peer's run: its answer written where --output asks, its
    record written (--result), and unless --quiet the line summary(record)
    with the repeats and warnings; the exit code (EXIT_VERIFY when the
    verification failed)."""
    if out:
        peer.write_output(out)
    rec = peer.record()
    write_record(peer.values["result"], rec)
    if not peer.values["quiet"]:
        print(summary(rec))
        print_repeats_and_warnings(prog, rec, peer.timing)
    return EXIT_VERIFY if rec["verification"]["status"] == "fail" else 0


def peer_main(prog, argv, parse, list_json, refuse_unhonoured, make_config, peer_class, one_rank_why, check=None):
    """contract_main for a peer class: the configuration after refusing what
    the peer cannot honour, then peer_class(values, config, the command line
    as launched).run()."""
    prog_path = os.environ.get("MAPP_PEER_PROG") or sys.argv[0]

    def configure(values, given):
        refuse_unhonoured(values, given)
        return make_config(values, given)

    def start(values, config):
        return peer_class(values, config, [prog_path] + list(argv)).run()

    return contract_main(prog, argv, parse, list_json, configure, one_rank_why, start, check=check)
