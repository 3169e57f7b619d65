#!/usr/bin/env python3
"""What a GPU minute buys: a runtime search before and after the pipeline.

    bench/pipeline_gpu.py <ciq build or prefix> <results dir> [example ...] [--budget N]

For each example of examples/ (default: stencil), or `heavy` (bench/heavy:
a heavy translation unit, compiles of about 10 s), copied to <results>/<ex>,
configured and built once, two searches of the same budget run on the same
GPU, one after the other, each in its own run directory:

  before: one worker, the budget counts configurations (ciq before issue 30:
          `workers: 1`, `search.budget_counts: configurations`)
  after:  the pipeline, ciq's defaults (workers: a quarter of the cores per
          GPU, at nice +10 beside a measurement; the budget counts distinct
          binaries; search.propose_ahead 1: the next generation is built
          while the last one is measured)

From each journal it prints: configurations evaluated, configurations built,
distinct binaries measured, the search phase's wall time (baseline recorded
to last search evaluation), the GPU's busy share of it (sum of measure_ms
over that time), distinct binaries measured per minute of the search phase,
and the winner with its validated speedup (the tune's finalists' verdict).
`--modes before,after,ahead2` adds `ahead2`: the pipeline with
search.propose_ahead 2 (two generations built while one is measured).
The ratio after/before of binaries per minute is the figure. Needs a GPU,
CUDA 13.0, cmake; no network.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time


def run(cmd, log, env=None, cwd=None):
    with open(log, "w") as f:
        t = time.time()
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        return rc, time.time() - t


def when(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def figures(journal):
    evals, winner, setup = [], None, {"workers": 1, "propose_ahead": 0}
    for line in open(journal):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("op") == "start":
            setup["propose_ahead"] = j.get("search", {}).get("propose_ahead", 0)
        if j.get("op") == "workers":
            setup["workers"] = j.get("workers", 1)
        if j.get("op") == "evaluation":
            evals.append(j)
        if j.get("op") == "winner":
            winner = j
    search = [e for e in evals if e.get("generation", 0) > 0]
    base = [e for e in evals if e.get("generation", 0) == 0]
    built = [e for e in evals if e.get("duplicate_kind") != "config"]
    measured = [e for e in evals if e.get("measure_ms", 0) > 0 and not e.get("duplicate_of")]
    measured_search = [e for e in measured if e.get("generation", 0) > 0]
    start = when(base[0]["evaluated_at"]) if base else None
    end = when(search[-1]["evaluated_at"]) if search else None
    wall = (end - start) if start and end else float("nan")
    busy = sum(e.get("measure_ms", 0) for e in search) / 1000.0
    return {
        "configurations": len(evals),
        "built": len(built),
        "binaries_measured": len(measured),
        "search_wall_s": wall,
        "gpu_busy": busy / wall if wall == wall and wall > 0 else float("nan"),
        "binaries_per_min": len(measured_search) / (wall / 60) if wall == wall and wall > 0 else float("nan"),
        "configs_per_binary": len(evals) / max(1, len(measured)),
        "winner": winner,
        "setup": setup,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ciq")
    ap.add_argument("results")
    ap.add_argument("examples", nargs="*", default=["stencil"])
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--modes", default="before,after")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    ciq_dir = os.path.abspath(a.ciq)
    ciq = os.path.join(ciq_dir, "bin", "ciq")
    module = os.path.join(ciq_dir, "lib", "cmake", "CompileIQ")
    os.makedirs(a.results, exist_ok=True)
    env = dict(os.environ)
    env["PATH"] = "/usr/local/cuda/bin:" + env["PATH"]
    for ex in a.examples:
        out = os.path.join(os.path.abspath(a.results), ex)
        shutil.rmtree(out, ignore_errors=True)
        src = os.path.join(here, "heavy") if ex == "heavy" else os.path.join(here, "..", "examples", ex)
        target = ex + "_bench"
        shutil.copytree(src, out + "/src")
        if os.path.exists(out + "/src/ciq.lock"):
            os.remove(out + "/src/ciq.lock")
        b = out + "/build"
        rc, _ = run(["cmake", "-S", out + "/src", "-B", b, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                     "-DCMAKE_CUDA_ARCHITECTURES=90", "-DCompileIQ_DIR=" + module], out + "/configure.log", env)
        rc = rc or run(["cmake", "--build", b, "--target", target], out + "/build.log", env)[0]
        if rc:
            print("%s: configure/build failed (%s)" % (ex, out))
            continue
        cfg = open(os.path.join(b, "ciq", target, "ciq.yaml")).read()
        rows = {}
        for mode in a.modes.split(","):
            text = cfg.replace("search:\n", "search:\n  budget_counts: %s\n" % (
                "configurations" if mode == "before" else "binaries"), 1)
            if mode == "ahead2":
                text = text.replace("search:\n", "search:\n  propose_ahead: 2\n", 1)
            text = "run_dir: %s/run-%s\n" % (out, mode) + "\n".join(
                l for l in text.split("\n") if not l.startswith("run_dir:"))
            if mode == "before":
                text = "workers: 1\n" + "\n".join(l for l in text.split("\n") if not l.startswith("workers:"))
            path = "%s/ciq-%s.yaml" % (out, mode)
            open(path, "w").write(text)
            rc, wall = run([ciq, "tune", "--config", path, "--max-evaluations", str(a.budget)],
                           "%s/tune-%s.log" % (out, mode), env)
            f = figures("%s/run-%s/journal.jsonl" % (out, mode))
            f["rc"], f["wall"] = rc, wall
            rows[mode] = f
        print("%s, budget %d (logs: %s)" % (ex, a.budget, out))
        print("  %-7s %6s %6s %9s %9s %9s %11s %10s" % ("", "configs", "built", "binaries", "search s",
                                                         "GPU busy", "binaries/min", "configs/bin"))
        for mode, f in rows.items():
            print("  %-7s %6d %6d %9d %9.1f %8.0f%% %11.2f %10.1f   (tune exit %d, %.0f s in all; workers %d, "
                  "propose_ahead %d)" % (
                      mode, f["configurations"], f["built"], f["binaries_measured"], f["search_wall_s"],
                      100 * f["gpu_busy"], f["binaries_per_min"], f["configs_per_binary"], f["rc"], f["wall"],
                      f["setup"]["workers"], f["setup"]["propose_ahead"]))
        for mode in rows:
            if mode != "before" and "before" in rows and rows["before"]["binaries_per_min"] > 0:
                print("  ratio %s/before, distinct binaries measured per minute of search: %.2fx" %
                      (mode, rows[mode]["binaries_per_min"] / rows["before"]["binaries_per_min"]))
        for mode, f in rows.items():
            w = f["winner"] or {}
            print("  %s winner: %s (improved: %s)" % (mode, w.get("candidate_id"), w.get("improved")))
            for l in open("%s/tune-%s.log" % (out, mode)):
                if any(k in l for k in ("finalists", "winner", "faster", "configurations:", "GPU busy", "ended")):
                    print("    | " + l.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
