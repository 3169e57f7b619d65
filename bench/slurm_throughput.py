#!/usr/bin/env python3
"""bench/slurm_throughput: the same compile-only search of examples/spill
(same seed, same candidates) with the local executor and one worker, then as
Slurm jobs on the two-node test cluster of tests/lit/slurm/Inputs/cluster.py
(munged, slurmctld, slurmd -N n1/n2 on this host; needs root). Prints the
evaluations per minute of each and their ratio (goal: >= 1.8x), and the
scheduling overhead per evaluation read from the journal: submit to start
(sbatch until `ciq worker` runs) and end to result read (the worker's record
written until the engine has read it); goal < 1 s.

Both searches are warmed up first (the local build tree built; each node's
workspace build tree configured and built by a short search), so the ratio
compares steady-state evaluations, not one-time set-up.

  cmake --build build --target bench-slurm-throughput
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

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "lit", "slurm", "Inputs"))
from cluster import Cluster  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--ciq", required=True)
ap.add_argument("--module-dir", required=True, help="<ciq build>/lib/cmake/CompileIQ")
ap.add_argument("--example", required=True, help="examples/spill")
ap.add_argument("--evaluations", type=int, default=13, help="evaluations of each search (baseline included)")
ap.add_argument("--rounds", type=int, default=2, help="alternating local and Slurm searches of each")
ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
args = ap.parse_args()
args.ciq, args.module_dir, args.example = map(os.path.abspath, (args.ciq, args.module_dir, args.example))

work = tempfile.mkdtemp(prefix="ciq-slurm-bench-")
src = os.path.join(work, "src")
shutil.copytree(args.example, src, ignore=shutil.ignore_patterns("ciq.lock", "build*"))


def run(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env,
                       cwd=work)
    if r.returncode != 0:
        sys.exit("slurm_throughput: error: %s failed (exit %d):\n%s" % (shlex.join(cmd), r.returncode,
                                                                         r.stdout[-3000:]))
    return r.stdout


build = os.path.join(work, "build")
run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCompileIQ_DIR=" + args.module_dir])
run(["cmake", "--build", build])
generated = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(build, "ciq")) for f in fs if f == "ciq.yaml"]
if not generated:
    sys.exit("slurm_throughput: error: %s has no ciq_tune()" % args.example)
base = open(generated[0]).read()
SEARCH = """
search:
  strategy: genetic
  pool_size: 6
  generations: 4
  seed: 3
  canary: false
"""
SLURM = """executor: slurm
slurm:
  max_jobs: 2
  time_limit_min: 10
  workspace: shared
  poll_s: 0.05
"""


def config(name, slurm):
    text = "\n".join(l for l in base.splitlines() if not l.startswith("run_dir:")) + "\n"
    if "search:" not in text:
        text += SEARCH
    text += "run_dir: %s\n" % os.path.join(work, "run-" + name)
    if slurm:
        text += SLURM
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def search(cfg, n, env=None):
    t0 = time.monotonic()
    run([args.ciq, "tune", "--fresh", "--config", cfg, "--max-evaluations", str(n), "--no-lock", "--quiet"], env)
    wall = time.monotonic() - t0
    run_dir = [l.split(":", 1)[1].strip() for l in open(cfg) if l.startswith("run_dir:")][0]
    evals = [json.loads(l) for l in open(os.path.join(run_dir, "journal.jsonl"))]
    return wall, [e for e in evals if e.get("op") == "evaluation"]


local = config("local", False)
search(local, 3)  # warm-up
local_s = slurm_s = 0
jobs = []
with Cluster(os.path.join(work, "cluster")) as c:
    slurm = config("slurm", True)
    search(slurm, 3, c.env())  # warm-up: each node's workspace configured and built
    # Rounds alternate local and Slurm, so that drift of a shared machine's
    # load hits both alike.
    for _ in range(args.rounds):
        t, local_evals = search(local, args.evaluations)
        local_s += t
        t, slurm_evals = search(slurm, args.evaluations, c.env())
        slurm_s += t
        jobs += [e["slurm"] for e in slurm_evals if e.get("slurm", {}).get("read_at")]

same = [e["candidate_hash"] for e in local_evals] == [e["candidate_hash"] for e in slurm_evals]
to_start = [j["started_at"] - j["submitted_at"] for j in jobs]
to_read = [j["read_at"] - j["finished_at"] for j in jobs]
local_rate = 60 * args.rounds * len(local_evals) / local_s
slurm_rate = 60 * args.rounds * len(slurm_evals) / slurm_s
print("slurm_throughput: examples/spill, compile-only, %d evaluations each x %d rounds (same candidates: %s), "
      "%d CPU cores here, load average %.1f" % (len(local_evals), args.rounds, same, os.cpu_count(), os.getloadavg()[0]))
print("  local executor, 1 worker : %6.1f s  %6.1f evaluations/min" % (local_s, local_rate))
print("  slurm, 2 nodes, 2 jobs   : %6.1f s  %6.1f evaluations/min" % (slurm_s, slurm_rate))
print("  ratio slurm / local      : %.2fx (goal >= 1.8x)" % (slurm_rate / local_rate))
if jobs:
    print("  scheduling overhead per evaluation (%d jobs): submit->start median %.2f s (max %.2f), "
          "end->result read median %.2f s (max %.2f), total median %.2f s (goal < 1 s)"
          % (len(jobs), statistics.median(to_start), max(to_start), statistics.median(to_read), max(to_read),
             statistics.median([a + b for a, b in zip(to_start, to_read)])))
if args.keep:
    print("kept: " + work)
else:
    shutil.rmtree(work, ignore_errors=True)
