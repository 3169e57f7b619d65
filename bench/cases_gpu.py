#!/usr/bin/env python3
"""One tune over several problem sizes (issue 33, "Several cases in one
objective"), measured on a GPU.

    bench/cases_gpu.py <ciq build or prefix> <results dir> [--sizes 1024,2048,4096] [--budget N] [--dry-run]

examples/gemm is copied to <results>/gemm/src and configured with
-DGEMM_SPACE=space-constrained.yaml (its tile parameters under the constraint
thread_tile * min_blocks_per_sm <= 16) and -DGEMM_SIZES=<sizes>: ciq_tune()
gets one `CASE n<size> ARGS --size <size>` per size, so every candidate runs
every size and its score is the geometric mean of its per-size ratios to the
baseline, no size slower by more than 1%. Then:

  ciq sample   the generated ciq.yaml loads, and the space within the constraint
  ciq tune     --max-evaluations <budget>          (tune.log)
  ciq validate each size, then the aggregate       (validate.log)

and prints, from the lock, each size's baseline and winner medians, runs,
noise, ratio and p-value, and the aggregate (also in summary.json).
--dry-run stops after `ciq sample` (no GPU needed). Needs CUDA 13.0, cmake,
ninja; no network.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys


def run(cmd, log, env, cwd=None):
    with open(log, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ciq", help="ciq build folder or install prefix (with bin/ciq, lib/cmake/CompileIQ)")
    ap.add_argument("results")
    ap.add_argument("--sizes", default="1024,2048,4096")
    ap.add_argument("--budget", type=int, default=16)
    ap.add_argument("--dry-run", action="store_true", help="configure and `ciq sample` only (no GPU)")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = os.path.abspath(a.ciq)
    ciq = os.path.join(prefix, "bin", "ciq")
    module = os.path.join(prefix, "lib", "cmake", "CompileIQ")
    sizes = [s for s in a.sizes.split(",") if s]
    if not sizes or not all(s.isdigit() for s in sizes):
        sys.exit("cases_gpu: --sizes: expected positive integers separated by commas, got %r" % a.sizes)
    out = os.path.join(os.path.abspath(a.results), "gemm")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(os.path.join(here, "..", "examples", "gemm"), out + "/src")
    for stale in ("ciq.lock", "gemm_bench.ciq.lock"):
        if os.path.exists(os.path.join(out, "src", stale)):
            os.remove(os.path.join(out, "src", stale))
    env = dict(os.environ)
    env["PATH"] = "/usr/local/cuda/bin:" + env["PATH"]
    b = out + "/build"
    rc = run(["cmake", "-S", out + "/src", "-B", b, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
              "-DCMAKE_CUDA_ARCHITECTURES=90", "-DCompileIQ_DIR=" + module,
              "-DGEMM_SPACE=space-constrained.yaml", "-DGEMM_SIZES=" + ";".join(sizes)], out + "/configure.log", env)
    if rc:
        sys.exit("cases_gpu: configure failed, see %s/configure.log" % out)
    yaml = os.path.join(b, "ciq", "gemm_bench", "ciq.yaml")
    if run([ciq, "sample", "5", "--config", yaml], out + "/sample.log", env):
        sys.exit("cases_gpu: the generated %s does not load, see %s/sample.log" % (yaml, out))
    print(open(out + "/sample.log").read().split("\n")[1])
    if a.dry_run:
        print("cases_gpu: dry run: configured, %s loads (%d cases); logs in %s" % (yaml, len(sizes), out))
        return 0
    if run(["cmake", "--build", b, "--target", "gemm_bench"], out + "/build.log", env):
        sys.exit("cases_gpu: build failed, see %s/build.log" % out)
    rc = run([ciq, "tune", "--config", yaml, "--max-evaluations", str(a.budget)], out + "/tune.log", env)
    print("ciq tune: exit %d (%s/tune.log)" % (rc, out))
    lockfile = os.path.join(out, "src", "gemm_bench.ciq.lock")
    if not os.path.exists(lockfile):
        print("cases_gpu: no lock was written (no candidate beat the baseline in every size); see tune.log")
        return 1
    rc = run([ciq, "validate", "--config", yaml], out + "/validate.log", env)
    print("ciq validate: exit %d (%s/validate.log)" % (rc, out))
    lock = json.load(open(lockfile))
    score = (next(iter(lock["architectures"].values())) if lock.get("schema_version", 1) >= 2 else lock).get("score", {})
    v = score.get("validation", {})
    summary = {"sizes": sizes, "budget": a.budget, "options": score, "validation": v}
    json.dump(summary, open(out + "/summary.json", "w"), indent=2)
    print("%-8s %12s %12s %9s %9s %8s %10s" % ("case", "baseline ms", "winner ms", "runs", "noise %", "ratio", "p"))
    for c in v.get("cases", []):
        print("%-8s %12.4f %12.4f %4d/%-4d %4.1f/%-4.1f %8.3f %10.2g" % (
            c["name"], c["baseline_median"], c["winner_median"], c["baseline_runs"], c["winner_runs"],
            c["baseline_noise_percent"], c["winner_noise_percent"], c["ratio"], c["p_value"]))
    if v:
        sp = v.get("speedup")
        print("aggregate (geometric mean of the ratios): %.4f, speedup %s, verdict: %s" % (
            v.get("aggregate", float("nan")), "%.3fx" % sp if isinstance(sp, (int, float)) else sp, v.get("verdict")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
