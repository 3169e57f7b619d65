#!/usr/bin/env python3
"""bench/tuning_throughput: evaluations per minute of `ciq tune` against a
loop that does what a hand-written CompileIQ objective does -- a clean full
rebuild of the project per candidate (fresh configure with the candidate's
flags, build everything, read `ptxas -v`) -- on the same example and the
same candidates (those `ciq tune` evaluated, read back from its journal).
Both are timed in this one run; the ratio is what it prints.

With --reuse-example (bench/heavy: a translation unit with a heavy front end
and host side), it also prints, measured in the same run, evaluations per
minute of ptxas-only candidates built four ways: the full rebuild
(CIQ_PTX_REUSE=0, today's path), PTX reuse (ptxas on the kept PTX, fatbin
and object rebuilt), compile-only via ptxas on the kept PTX (spill/register
objectives: no object assembled), and ptxas alone on the kept PTX (the limit).
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
ap.add_argument("--reuse-example", help="a project with HEAVY_OBJECTIVE runtime|compile (bench/heavy)")
ap.add_argument("--reuse-evaluations", type=int, default=5, help="evaluations per PTX-reuse run (baseline included)")
ap.add_argument("--skip-loop", action="store_true", help="only the PTX-reuse numbers")
args = ap.parse_args()
args.ciq, args.module_dir = os.path.abspath(args.ciq), os.path.abspath(args.module_dir)

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


def loop_comparison():
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


def tune_heavy(label, objective, extra_env):
    """One `ciq tune` of the reuse example; returns (wall s, evaluations, build dir)."""
    src_r = os.path.join(work, "heavy-src")
    if not os.path.isdir(src_r):
        shutil.copytree(args.reuse_example, src_r, ignore=shutil.ignore_patterns("build*"))
    b = os.path.join(work, "heavy-" + label)
    run(["cmake", "-S", src_r, "-B", b, "-G", "Ninja", "-DCompileIQ_DIR=" + args.module_dir,
         "-DHEAVY_OBJECTIVE=" + objective, "-DHEAVY_BUDGET=%d" % args.reuse_evaluations])
    cfgs = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(b, "ciq")) for f in fs if f == "ciq.yaml"]
    env = dict(os.environ, **extra_env)
    t0 = time.monotonic()
    run([args.ciq, "tune", "--config", cfgs[0], "--max-evaluations", str(args.reuse_evaluations), "--no-lock",
         "--no-canary", "--quiet"], env=env)
    wall = time.monotonic() - t0
    j = [json.loads(l) for l in open(os.path.join(os.path.dirname(cfgs[0]), "journal.jsonl"))]
    evals = [e for e in j if e.get("op") == "evaluation"]
    return wall, evals, os.path.dirname(cfgs[0])


def ptxas_alone(run_dir, evals):
    """ptxas on the kept PTX with each candidate's options, as nvcc runs it; seconds per candidate."""
    ptx = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(run_dir, "ptx-reuse")) for f in fs
           if f.endswith(".ptx")]
    if not ptx:
        sys.exit("tuning_throughput: error: no kept PTX under %s/ptx-reuse (was PTX reuse used?)" % run_dir)
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    times = []
    for e in evals[1:]:
        if e.get("duplicate_kind") == "config":
            continue
        t0 = time.monotonic()
        run([ptxas, "-arch=sm_90", "-m64", "-v"] + e["rendered"]["ptxas"] + [ptx[0], "-o", os.path.join(work, "alone.cubin")])
        times.append(time.monotonic() - t0)
    return times


def per_candidate_s(evals):
    """Build plus measurement of the ptxas-only candidates (the baseline, which keeps the PTX, left out)."""
    return [(e.get("build_ms", 0) + e.get("measure_ms", 0)) / 1000 for e in evals[1:]
            if e.get("duplicate_kind") != "config"]


def reuse_comparison():
    n = args.reuse_evaluations
    full_wall, full_evals, _ = tune_heavy("full", "runtime", {"CIQ_PTX_REUSE": "0"})
    reuse_wall, reuse_evals, reuse_dir = tune_heavy("reuse", "runtime", {})
    conly_wall, conly_evals, _ = tune_heavy("compile", "compile", {})
    alone = ptxas_alone(reuse_dir, reuse_evals)
    rate = lambda secs: 60 / (sum(secs) / len(secs))
    full_c, reuse_c, conly_c = per_candidate_s(full_evals), per_candidate_s(reuse_evals), per_candidate_s(conly_evals)
    same = [a["candidate_hash"] == b["candidate_hash"] for a, b in zip(full_evals, reuse_evals)]
    print("ptx reuse: %s, %d evaluations per run (the first, the default compile, keeps the PTX)%s"
          % (args.reuse_example, n, "" if all(same) else "; note: the runs evaluated different candidates"))
    print("  end to end (ciq tune wall time, set-up and baseline included):")
    print("    full rebuild (CIQ_PTX_REUSE=0): %6.1f s  %6.2f evaluations/min" % (full_wall, n / full_wall * 60))
    print("    PTX reuse (runtime objective):  %6.1f s  %6.2f evaluations/min" % (reuse_wall, n / reuse_wall * 60))
    print("    compile-only on kept PTX:       %6.1f s  %6.2f evaluations/min" % (conly_wall, n / conly_wall * 60))
    print("  ptxas-only candidates (build + measurement per candidate, %d each):" % len(full_c))
    print("    full rebuild:                   %6.2f s  %6.2f evaluations/min" % (sum(full_c) / len(full_c), rate(full_c)))
    print("    PTX reuse:                      %6.2f s  %6.2f evaluations/min" % (sum(reuse_c) / len(reuse_c), rate(reuse_c)))
    print("    compile-only on kept PTX:       %6.2f s  %6.2f evaluations/min" % (sum(conly_c) / len(conly_c), rate(conly_c)))
    print("    ptxas alone (the limit):        %6.2f s  %6.2f evaluations/min" % (sum(alone) / len(alone), rate(alone)))
    print("ratio PTX reuse / full rebuild (ptxas-only candidates): %.2fx (goal: at least 4x)" % (rate(reuse_c) / rate(full_c)))
    print("ratio compile-only time / ptxas time: %.2fx (goal: at most 1.3x)" % (rate(alone) / rate(conly_c)))
    print("ratio end to end, PTX reuse / full rebuild: %.2fx" % ((n / reuse_wall) / (n / full_wall)))


if not args.skip_loop:
    loop_comparison()
if args.reuse_example:
    reuse_comparison()
if not args.keep:
    shutil.rmtree(work, ignore_errors=True)
else:
    print("kept", work)
