#!/usr/bin/env python3
"""bench/compile_only_cost: what one compile-only candidate costs against
ptxas alone on the same PTX (issue 30 item 4, goal at most 1.3x).

In one run: configures a copy of examples/spill (objectives spill_bytes and
registers: compile-only, no GPU), runs one `ciq tune` of N evaluations, and
reads each built candidate's `build_ms` from the journal (the engine's whole
build of the candidate: the build tool, ciq-ptxas and ptxas on the PTX the
baseline kept, the receipts). Then it runs ptxas alone on that kept PTX with
each of those candidates' options (as the wrapper runs it: -arch, -m64, -v),
REPEATS times each, and prints the medians and their ratio. The baseline
(which runs the front end and keeps the PTX) and configuration twins (not
built) are left out.

usage: compile_only_cost.py --ciq <build>/bin/ciq --module-dir <build>/lib/cmake/CompileIQ
           [--example examples/spill] [--evaluations 30] [--repeats 3]
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--ciq", required=True)
ap.add_argument("--module-dir", required=True, help="<ciq build>/lib/cmake/CompileIQ")
ap.add_argument("--example", default=os.path.join(os.path.dirname(__file__), "..", "examples", "spill"))
ap.add_argument("--evaluations", type=int, default=30, help="budget of the search (baseline included)")
ap.add_argument("--repeats", type=int, default=3, help="ptxas-alone runs per candidate (their median)")
ap.add_argument("--arch", default="sm_90", help="the example's architecture (examples/spill: 90)")
ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
args = ap.parse_args()
args.ciq, args.module_dir = os.path.abspath(args.ciq), os.path.abspath(args.module_dir)


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.exit("compile_only_cost: error: %s failed (exit %d):\n%s" % (shlex.join(cmd), r.returncode, r.stdout[-3000:]))
    return r.stdout


def main():
    work = tempfile.mkdtemp(prefix="ciq-compile-only-")
    src, build = os.path.join(work, "src"), os.path.join(work, "build")
    shutil.copytree(args.example, src, ignore=shutil.ignore_patterns("*.ciq.lock", "build*"))
    run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCompileIQ_DIR=" + args.module_dir])
    cfgs = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(build, "ciq")) for f in fs if f == "ciq.yaml"]
    if not cfgs:
        sys.exit("compile_only_cost: error: %s has no ciq_tune() (no ciq.yaml under %s/ciq)" % (args.example, build))
    run_dir = os.path.dirname(cfgs[0])
    run([args.ciq, "tune", "--config", cfgs[0], "--max-evaluations", str(args.evaluations), "--no-lock",
         "--no-canary", "--quiet"])
    evals = [e for e in map(json.loads, open(os.path.join(run_dir, "journal.jsonl"))) if e.get("op") == "evaluation"]
    # Built candidates after the baseline that reused the kept PTX (ptxas-only:
    # the default space of examples/spill holds nothing else).
    built = [e for e in evals[1:] if e.get("duplicate_kind") != "config" and e.get("status") == "OK"
             and all(o.get("ptx_reuse") == "reused" for o in e.get("objects", []))]
    if not built:
        sys.exit("compile_only_cost: error: no candidate reused the kept PTX (see %s/logs)" % run_dir)
    ptx = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(run_dir, "ptx-reuse")) for f in fs
                 if f.endswith(".ptx"))
    if len(ptx) != 1:
        sys.exit("compile_only_cost: error: expected one kept PTX under %s/ptx-reuse, found %d" % (run_dir, len(ptx)))
    arch = args.arch
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    alone = []
    for e in built:
        times = []
        for _ in range(args.repeats):
            t0 = time.monotonic()
            run([ptxas, "-arch=" + arch, "-m64", "-v"] + e["rendered"]["ptxas"] + [ptx[0], "-o",
                                                                                   os.path.join(work, "alone.cubin")])
            times.append(time.monotonic() - t0)
        alone.append(statistics.median(times))
    candidate = [e["build_ms"] / 1000 for e in built]
    mc, ma = statistics.median(candidate), statistics.median(alone)
    print("compile_only_cost: %s, %d evaluations (%d configurations built from the kept PTX, each compared)"
          % (os.path.relpath(args.example), len(evals), len(built)))
    print("  compile-only candidate (build_ms, median): %7.3f s" % mc)
    print("  ptxas alone on the same PTX (median):      %7.3f s" % ma)
    print("ratio compile-only candidate / ptxas alone: %.2fx (goal: at most 1.3x)" % (mc / ma))
    if args.keep:
        print("kept", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


main()
