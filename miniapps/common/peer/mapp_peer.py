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


def check_writable(path):
    """Refuse an answer file that cannot be created before computing for minutes."""
    if os.path.isdir(path):
        raise Refusal(f"--output {path} is a folder, not a file")
    parent = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(parent):
        raise Refusal(f"--output {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise Refusal(f"--output {path}: not writable")


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
