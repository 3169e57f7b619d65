#!/usr/bin/env python3
"""bench/tuning_throughput: evaluations per minute of `ciq tune` against a
loop that does what a hand-written CompileIQ objective does -- a clean full
rebuild of the project per candidate (fresh configure with the candidate's
flags, build everything, read `ptxas -v`) -- on the same example and the
same candidates (those `ciq tune` evaluated, read back from its journal).
Both are timed in this one run; the ratio is what it prints.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--ciq", required=True)
ap.add_argument("--module-dir", required=True, help="<ciq build>/lib/cmake/CompileIQ")
ap.add_argument("--example", required=True, help="a CMake CUDA project using ciq_tune (examples/spill)")
ap.add_argument("--evaluations", type=int, default=9, help="evaluations of each (baseline included)")
ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
args = ap.parse_args()

work = tempfile.mkdtemp(prefix="ciq-throughput-")
src = os.path.join(work, "src")
shutil.copytree(args.example, src, ignore=shutil.ignore_patterns("ciq.lock", "build*"))


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.exit("tuning_throughput: error: %s failed (exit %d):\n%s" % (shlex.join(cmd), r.returncode, r.stdout[-3000:]))
    return r.stdout


def configure(build, cuda_flags=""):
    cmd = ["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCompileIQ_DIR=" + args.module_dir]
    if cuda_flags:
        cmd.append("-DCMAKE_CUDA_FLAGS=" + cuda_flags)
    run(cmd)


# 1. ciq tune, timed from the command's start to its end (set-up included).
build = os.path.join(work, "build")
configure(build)
configs = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(build, "ciq")) for f in fs if f == "ciq.yaml"]
if not configs:
    sys.exit("tuning_throughput: error: %s has no ciq_tune() (no ciq.yaml under %s/ciq)" % (args.example, build))
cfg = configs[0]
t0 = time.monotonic()
run([args.ciq, "tune", "--config", cfg, "--max-evaluations", str(args.evaluations), "--no-lock", "--no-canary",
     "--quiet"])
ciq_s = time.monotonic() - t0
journal = [json.loads(l) for l in open(os.path.join(os.path.dirname(cfg), "journal.jsonl"))]
evals = [j for j in journal if j.get("op") == "evaluation"]
rebuilt = [e for e in evals if e.get("duplicate_kind") != "config"]

# 2. The hand-written loop: the same candidates, each a clean full rebuild.
def flags(e):
    r = e["rendered"]
    if r.get("acfs"):
        sys.exit("tuning_throughput: error: ACF candidates are not supported by the rebuild loop")
    parts = ["-Xptxas=-v"] + ["-Xptxas=" + o for o in r["ptxas"]] + r["nvcc"] + ["-D" + d for d in r["defines"]]
    return " ".join(parts)


loop = os.path.join(work, "loop")
t0 = time.monotonic()
for e in evals:
    shutil.rmtree(loop, ignore_errors=True)
    configure(loop, flags(e))
    out = run(["cmake", "--build", loop])
    if "spill stores" not in out:
        sys.exit("tuning_throughput: error: the rebuild of %s printed no ptxas statistics" % e["candidate_id"])
loop_s = time.monotonic() - t0

n = len(evals)
ciq_rate = n / ciq_s * 60
loop_rate = n / loop_s * 60
print("tuning_throughput: %s, %d candidates (%d built by ciq, %d configuration duplicates not rebuilt)"
      % (args.example, n, len(rebuilt), n - len(rebuilt)))
print("ciq tune:              %6.1f s  %6.2f evaluations/min" % (ciq_s, ciq_rate))
print("clean rebuild loop:    %6.1f s  %6.2f evaluations/min  (fresh configure + full build per candidate)"
      % (loop_s, loop_rate))
print("ratio ciq / loop: %.2fx (goal: at least 2x)" % (ciq_rate / loop_rate))
if not args.keep:
    shutil.rmtree(work, ignore_errors=True)
else:
    print("kept", work)
