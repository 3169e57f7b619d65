#!/usr/bin/env python3
"""Phase times of the CPU stand-in tunes the tests use (issue 49 item 2):
for each, the wall time of the search and of each phase after it
(finalists, minimization, rehearsal, attribution), the ratio after the
search / search (issue 49's goal: at most 0.3x) and the benchmark runs made
after the search, from the summary's phases line and the journal.

The stand-in: tests/lit/engine/Inputs/standin behind Inputs/jitter.py
(seeded noise), -DBLOCK=256 10% faster, a register cap of 40 or less 3%:

  golden     Inputs/golden.yaml: 1% noise, adaptive repeats, one control
  two        Inputs/adaptive.yaml, 1% noise, 3 repeats, BLOCK and a ptxas
             control the minimization drops (phases-interrupted.test)
  noisy      10% noise, adaptive repeats up to 40, one control (reuse-runs.test)
  caps       Inputs/time-budget.yaml: 12 register caps, 3 repeats of a run
             that sleeps 0.5 s, budget 13; caps-60s and caps-90s: runs of
             1 s under `--time 60s` and `--time 90s` (issue 55: the share of
             the budget used, the "used" column, goal 90-100% or a reason)

usage: phase_times.py --ciq BIN --module-dir DIR --work DIR [--only NAME,...]
e.g.   python3 bench/phase_times.py --ciq build/bin/ciq \\
           --module-dir build/lib/cmake/CompileIQ --work /tmp/ciq-phase-times
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--ciq", required=True)
p.add_argument("--module-dir", required=True)
p.add_argument("--work", required=True)
p.add_argument("--only", default="")
args = p.parse_args()
ciq, work = os.path.abspath(args.ciq), os.path.abspath(args.work)
INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lit", "engine", "Inputs")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
shutil.copytree(os.path.join(INPUTS, "standin"), os.path.join(work, "proj"))
build = os.path.join(work, "build")
subprocess.check_call(["cmake", "-S", os.path.join(work, "proj"), "-B", build, "-G", "Ninja",
                       "-DCompileIQ_DIR=" + os.path.abspath(args.module_dir)], stdout=subprocess.DEVNULL)
for f in ("jitter.py", "kill_at_run.py", "slow_run.py"):
    shutil.copy(os.path.join(INPUTS, f), build)


def adaptive(name, mode, measure, extra=""):
    text = open(os.path.join(INPUTS, "adaptive.yaml")).read().replace("RUNDIR", name).replace("MODE", mode)
    text = text.replace("  MEASURE", measure)
    text = re.sub(r"(?m)^lockfile: .*", "lockfile: %s.lock" % name, text)
    return text.replace("  command: [", '  command: [python3, kill_at_run.py, %s.count, "0", ' % name, 1) + extra


CACHE = '    - name: cache\n      ptxas: "--def-load-cache={}"\n      literal: cg\n'
golden = open(os.path.join(INPUTS, "golden.yaml")).read().replace("golden", "g")
golden = golden.replace("  command: [", '  command: [python3, kill_at_run.py, g.count, "0", ', 1)
caps = open(os.path.join(INPUTS, "time-budget.yaml")).read()
TUNES = [
    ("golden", "g", golden, []),
    ("two", "two", adaptive("two", "gauss=1", "  repeats: 3", CACHE), []),
    ("noisy", "noisy", adaptive("noisy", "gauss=10", "  repeats: adaptive\n  max_repeats: 40"), []),
    ("caps", "caps", caps.replace("RUNDIR", "caps").replace("SLEEP", "0.5"), []),
    ("caps-60s", "c60", caps.replace("RUNDIR", "c60").replace("SLEEP", "1"), ["--time", "60s"]),
    ("caps-90s", "c90", caps.replace("RUNDIR", "c90").replace("SLEEP", "1"), ["--time", "90s"]),
]
only = set(filter(None, args.only.split(",")))
print("%-9s %7s %8s %8s %8s %8s %8s %6s %10s %5s %s" % ("tune", "wall s", "search", "final.", "minim.", "rehears.",
                                                         "attrib.", "ratio", "runs after", "used", "verdict"))
for label, name, text, extra in TUNES:
    if only and label not in only:
        continue
    cfg = os.path.join(work, name + ".yaml")
    open(cfg, "w").write(text)
    start = time.time()
    out = subprocess.run([ciq, "tune", "--config", cfg] + extra, capture_output=True, text=True, cwd=work).stdout
    wall = time.time() - start
    open(os.path.join(work, name + ".out"), "w").write(out)
    m = re.search(r"^phases: (.*)$", out, re.M)
    phases = dict((k.strip(), float(v)) for k, v in re.findall(r"([a-z -]+) ([0-9.]+) s", m.group(1).split(";")[0])) if m else {}
    search = phases.get("search", 0) + phases.get("per-kernel stage", 0)
    after = sum(v for k, v in phases.items() if k not in ("search", "per-kernel stage"))
    j = [json.loads(l) for l in open(os.path.join(work, name, "journal.jsonl"))]
    searched = sum(len(e["runs"]) + sum(len(c.get("runs", [])) for c in e.get("cases", []))
                   for e in j if e["op"] == "evaluation")
    total = sum(1 for _ in open(os.path.join(build, name + ".count")))
    v = re.search(r"^verdict: (.*)$", out, re.M)
    used = re.search(r"^time budget: .* used \((\d+)%\)", out, re.M)
    print("%-9s %7.1f %8.1f %8.1f %8.1f %8.1f %8.1f %6s %10d %5s %s" % (
        label, wall, search, phases.get("finalists", 0), phases.get("minimization", 0), phases.get("rehearsal", 0),
        phases.get("attribution", 0), "%.2fx" % (after / search) if search else "-", total - searched,
        used.group(1) + "%" if used else "-", v.group(1)[:60] if v else "-"))
    sys.stdout.flush()
