"""A stand-in for a traced CUDA program (issue 39), for machines without a
GPU: runs the stand-in program (Inputs/standin: prints time_ms=<t>, t set by
the candidate's build) and writes, as libciq-kernel-trace would at exit,
$CIQ_KERNEL_TRACE.<pid>.json with two kernels: step (t ms over 4 launches)
and setup (a fixed 0.5 ms). It prints nothing: kernel_time_ms needs no timer.

usage: fake_trace.py <mode> <program> [args...]
  ok, all   the trace as above
  children  two processes, each writing its own trace (half of step's time each)
  none      no trace (the injection did not load)
  error     a trace whose status is a CUPTI error
  exit      a trace left "incomplete" (the process ended without exit handlers)
  nolib     ok, but fails unless CUDA_INJECTION64_PATH names an existing file
  timed     the program's own time_ms=<t> printed (a time_ms objective); a
            trace only when the run is traced, and "traced" or "untraced"
            appended to $FAKE_TRACE_LOG with the case's args
"""
import json
import os
import re
import subprocess
import sys

mode, program = sys.argv[1], sys.argv[2:]
prefix = os.environ.get("CIQ_KERNEL_TRACE")
lib = os.environ.get("CUDA_INJECTION64_PATH", "")
if mode == "timed":
    traced = bool(prefix) and os.path.exists(lib)
    case = [a for a in program if a.startswith("--case=")]
    with open(os.environ["FAKE_TRACE_LOG"], "a") as f:
        f.write("%s %s\n" % ("traced" if traced else "untraced", case[0][7:] if case else "-"))
    program = [a for a in program if not a.startswith("--case=")]
if mode == "timed" and not (bool(prefix) and os.path.exists(lib)):
    sys.stdout.write(subprocess.run(program, capture_output=True, text=True, check=True).stdout)
    sys.exit(0)
if not prefix or not os.path.exists(lib):
    sys.exit("fake_trace.py: not a traced run (CIQ_KERNEL_TRACE=%r, CUDA_INJECTION64_PATH=%r)" % (prefix, lib))
out = subprocess.run(program, capture_output=True, text=True, check=True).stdout
t = float(re.search(r"time_ms=([-0-9.eE+]+)", out).group(1))


def kernel(name, launches, ms):
    ns = int(ms * 1e6)
    return {"name": name, "launches": launches, "total_ns": ns, "min_ns": ns // launches, "max_ns": ns // launches,
            "grid": [64, 1, 1], "block": [256, 1, 1], "registers": 32, "static_shared_bytes": 0,
            "dynamic_shared_bytes": 0, "device": 0}


def write(pid, kernels, status="ok", error=""):
    doc = {"format": "ciq-kernel-trace", "version": 1, "pid": pid, "status": status, "error": error,
           "cupti": "", "cupti_version": 0, "records": 0, "dropped_records": 0, "kernels": kernels}
    with open("%s.%d.json" % (prefix, pid), "w") as f:
        json.dump(doc, f)


step, setup = "_Z4stepPfi", "_ZN12_GLOBAL__N_15setupEv"
if mode == "timed":   # a kernel of the case's own when it names one
    name = "_Z5large" + "v" if "--case=large" in sys.argv else step
    write(os.getpid(), [kernel(name, 4, t), kernel(setup, 1, 0.5)])
    print(out, end="")
elif mode in ("ok", "all", "nolib"):
    write(os.getpid(), [kernel(step, 4, t), kernel(setup, 1, 0.5)])
elif mode == "children":
    write(os.getpid(), [kernel(step, 2, t / 2), kernel(setup, 1, 0.5)])
    write(os.getpid() + 1000000, [kernel(step, 2, t / 2)])
elif mode == "error":
    write(os.getpid(), [], "error", "cuptiActivityEnable(CONCURRENT_KERNEL) failed: "
          "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (another CUPTI client is attached)")
elif mode == "exit":
    write(os.getpid(), [], "incomplete", "the process ended before its exit handlers ran")
