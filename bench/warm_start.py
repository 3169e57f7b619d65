#!/usr/bin/env python3
"""Warm against cold re-tunes after a one-line source change, with real
`ciq tune` runs on the CPU (issue 49 item 5; the landscape replay of the same
question is `bench/search_efficiency --warm`).

Compile-only objectives, spill bytes then registers (no GPU), on one of:

  multi  (default) bench/landscapes/kernels/multi_kernel.cu (three kernels
         of different register pressure) in a CUDA project written here, the
         space of bench/landscapes/multi/space.yaml (-DUNROLL, ptxas
         --opt-level, --maxrregcount, expensive optimizations: 192 points);
         the edit widens the stencil, RADIUS 4 -> 5.
  spill  examples/spill (an SGEMM that spills under its __launch_bounds__),
         the space of bench/landscapes/spill/space.yaml (ptxas scheduling and
         the opt-in override of the register cap: 160 points); the edit
         deepens the shared-memory stage, BK 8 -> 16.

Per seed:
  1. the earlier search: `ciq tune` of the original source (its own run dir);
  2. the edit, once for all seeds: one line of the kernel (--edit OLD=>NEW);
  3. the cold re-tune: the same ciq.yaml but an empty run dir (`ciq tune
     --fresh` is no cold start: it moves the earlier journal to
     journal.jsonl.previous and plans the warm start from it, like a plain
     `ciq tune`), and the warm re-tune: the same ciq.yaml in the earlier run
     dir, which `ciq tune` detects (its "warm start: ..." line, checked here).

Reported per seed and as medians: distinct binaries (device codes; twins
cost nothing) measured until the best score known for the edited program
(the best of every re-tune, all seeds, cold and warm) was first reached,
from each re-tune's results.csv; a re-tune that never reached it counts as
its budget + 1 ('>'). The earlier search spends --budget binaries, the
re-tunes --retune-budget (the time: about 1.5 s a binary on a shared
2-core machine, 3 tunes a seed).

usage: warm_start.py --ciq BIN --module-dir DIR --work DIR [--program multi|spill] [--seeds 1,2,3]
                     [--budget 30] [--retune-budget 15] [--edit OLD=>NEW]
e.g.   python3 bench/warm_start.py --ciq build/bin/ciq \\
           --module-dir build/lib/cmake/CompileIQ --work /tmp/ciq-warm-start
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--ciq", required=True)
p.add_argument("--module-dir", required=True)
p.add_argument("--work", required=True)
p.add_argument("--seeds", default="1,2,3")
p.add_argument("--budget", type=int, default=30, help="the earlier search's budget (distinct binaries, search.max_evaluations)")
p.add_argument("--retune-budget", type=int, default=15,
               help="the re-tunes' budget (`ciq tune --max-evaluations`, which the warm start does not compare)")
p.add_argument("--program", choices=["multi", "spill"], default="multi")
p.add_argument("--edit", help="the one-line change to the kernel, OLD=>NEW (default: the program's)")
args = p.parse_args()
ciq, work = os.path.abspath(args.ciq), os.path.abspath(args.work)
here = os.path.dirname(os.path.abspath(__file__))
seeds = [int(s) for s in args.seeds.split(",")]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
proj, build = os.path.join(work, "proj"), os.path.join(work, "build")
# program: (target, kernel source, space, the default edit)
PROGRAMS = {
    "multi": ("multi", "multi_kernel.cu", "multi", "#define RADIUS 4=>#define RADIUS 5"),
    "spill": ("spill_bench", "spill_kernel.cu", "spill", "constexpr int BK = 8;=>constexpr int BK = 16;"),
}
target, kernel_name, space_name, default_edit = PROGRAMS[args.program]
if args.program == "spill":
    shutil.copytree(os.path.join(here, "..", "examples", "spill"), proj)
else:
    os.makedirs(proj)
    shutil.copy(os.path.join(here, "landscapes", "kernels", kernel_name), proj)
    open(os.path.join(proj, "main.cpp"), "w").write("int main() { return 0; }  // compile-only objectives\n")
    open(os.path.join(proj, "CMakeLists.txt"), "w").write(
        "cmake_minimum_required(VERSION 3.24)\nset(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING \"\")\n"
        "project(ciq_warm_start LANGUAGES CXX CUDA)\nadd_executable(multi main.cpp multi_kernel.cu)\n"
        "find_package(CompileIQ REQUIRED)\nciq_tune(multi METRIC spill_bytes registers)\n")
subprocess.check_call(["cmake", "-S", proj, "-B", build, "-G", "Ninja",
                       "-DCompileIQ_DIR=" + os.path.abspath(args.module_dir)], stdout=subprocess.DEVNULL)
SPACE = os.path.join(here, "landscapes", space_name, "space.yaml")


def config(name, seed):
    """A ciq.yaml of its own per seed (and per cold re-tune): run dir and lockfile."""
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write("target: %s\nbuild_dir: %s\nrun_dir: %s\nlockfile: %s\n"
                "objectives:\n  - metric: spill_bytes\n  - metric: registers\n"
                "search:\n  seed: %d\n  max_evaluations: %d\nspace:\n  include: [%s]\n"
                % (target, build, os.path.join(work, "runs", name), os.path.join(work, name + ".lock"), seed, args.budget,
                   SPACE))
    return path


def tune(cfg, label, budget=None):
    start = time.time()
    extra = ["--max-evaluations", str(budget)] if budget else []
    out = subprocess.run([ciq, "tune", "--config", cfg] + extra, capture_output=True, text=True, cwd=work)
    open(os.path.join(work, label + ".out"), "w").write(out.stdout + out.stderr)
    if out.returncode != 0:
        sys.exit("warm_start: %s failed (%d); see %s.out" % (label, out.returncode, os.path.join(work, label)))
    return out.stdout, time.time() - start


def rows(name):
    """(spill bytes, registers) of each new binary of a re-tune, in the order measured."""
    out = []
    for r in csv.DictReader(open(os.path.join(work, "runs", name, "results.csv"))):
        if r["status"] == "OK" and not r["duplicate_kind"]:
            out.append((float(r["spill_bytes"]), float(r["registers"])))
    return out


started = time.time()
for s in seeds:
    tune(config("seed%d" % s, s), "earlier-seed%d" % s)
old, new = (args.edit or default_edit).split("=>")
kernel = os.path.join(proj, kernel_name)
text = open(kernel).read()
if text.count(old) != 1:
    sys.exit("warm_start: --edit: %r is not one line of %s" % (old, kernel_name))
open(kernel, "w").write(text.replace(old, new))
found = {}
for s in seeds:
    tune(config("seed%d-cold" % s, s), "cold-seed%d" % s, args.retune_budget)
    out, _ = tune(os.path.join(work, "seed%d.yaml" % s), "warm-seed%d" % s, args.retune_budget)
    m = re.search(r"^warm start: .*$", out, re.M)
    if not m:
        sys.exit("warm_start: the re-tune of seed %d did not start warm; see warm-seed%d.out" % (s, s))
    found[s] = {"cold": rows("seed%d-cold" % s), "warm": rows("seed%d" % s)}
best = min(v for runs in found.values() for side in runs.values() for v in side)


def to_best(binaries):
    return next((i + 1 for i, v in enumerate(binaries) if v == best), args.retune_budget + 1)


def shown(n):
    return ">%d" % args.retune_budget if n > args.retune_budget else "%g" % n


print("%s, edit: %s -> %s; best known after it: %g spill bytes, %g registers; budgets: earlier %d, "
      "re-tunes %d; %.0f s in all" % (args.program, old.strip(), new.strip(), best[0], best[1], args.budget,
                                      args.retune_budget, time.time() - started))
print("| seed | cold: binaries to the best | warm | cold: its best | warm: its best |")
print("| --- | --- | --- | --- | --- |")
cold, warm = [], []
for s in seeds:
    c, w = to_best(found[s]["cold"]), to_best(found[s]["warm"])
    cold.append(c)
    warm.append(w)
    print("| %d | %s | %s | %g/%g | %g/%g |" % ((s, shown(c), shown(w)) + min(found[s]["cold"]) + min(found[s]["warm"])))
mc, mw = statistics.median(cold), statistics.median(warm)
print("| median | %s | %s | warm / cold %.2f | |" % (shown(mc), shown(mw), mw / mc))
