#!/usr/bin/env python3
"""Compiles one translation unit three ways through ciq-ptxas under the fake
engine, with the real nvcc/ptxas, and prints what FileCheck compares:

  1. the default candidate (no controls) in run directory RUN: a full
     compile that keeps its front end (receipt ptx_reuse "kept");
  2. each ptxas-only candidate in RUN: PTX reuse ("reused");
  3. the same candidate with CIQ_PTX_REUSE=0 in a fresh run directory: the
     full nvcc compile with the same options ("full").

For each candidate: "<name>: <how 2 was built> <how 3 was built> sass=same|DIFFERENT
stats=same|DIFFERENT" (the receipts' device-code SHA-256 and ptxas statistics).

  ptx_reuse_check.py --work DIR --ciq-ptxas P --fake-engine "python3 fake_engine.py"
                     [--launcher ccache] [--compile-only] -- nvcc args (without -o)...
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

CANDIDATES = {
    "O1": ["--opt-level=1", "--maxrregcount=40"],
    "O0": ["--opt-level=0", "--fmad=false"],
}


def candidate(work, name, ptxas, need_object):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump({"candidate_id": name, "candidate_hash": "0" * 64, "ptxas_options": ptxas,
                   "nvcc_options": [], "defines": [], "acfs": [], "compile_timeout_s": 0,
                   "need_object": need_object}, f)
    return path


def compile_one(args, name, cand, run_dir, out, env_extra=None):
    """Compiles to one object path (the key covers the command, -o included), then copies it to `out`."""
    receipts = os.path.join(args.work, name + ".receipts.json")
    obj = os.path.join(args.work, "k.o")
    cmd = shlex.split(args.fake_engine) + ["--candidate", cand, "--receipts", receipts, "--run-dir", run_dir, "--"]
    cmd += [args.ciq_ptxas] + args.launcher + args.nvcc + ["-o", obj]
    env = dict(os.environ, **(env_extra or {}))
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.stdout:
        sys.stderr.write(r.stdout)
        print("%s: output: %s" % (name, r.stdout.strip().replace("\n", " | ")))
    if r.returncode != 0:
        sys.exit("%s: exit %d" % (name, r.returncode))
    shutil.copyfile(obj, out)
    rc = [x for x in json.load(open(receipts)) if x.get("op") != "hello"]
    return rc[-1]


def stats(rc):
    return sorted((k["name"], k["arch"], k["registers"], k["spill_stores"], k["spill_loads"], k["stack_frame"])
                  for k in rc["kernels"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--ciq-ptxas", required=True)
    p.add_argument("--fake-engine", required=True)
    p.add_argument("--launcher", action="append", default=[])
    p.add_argument("--compile-only", action="store_true")
    p.add_argument("nvcc", nargs=argparse.REMAINDER)
    args = p.parse_args()
    args.nvcc = args.nvcc[1:] if args.nvcc[:1] == ["--"] else args.nvcc
    os.makedirs(args.work, exist_ok=True)
    run = os.path.join(args.work, "run")
    base = compile_one(args, "base", candidate(args.work, "base", [], True), run, os.path.join(args.work, "base.o"))
    print("base: %s" % base["ptx_reuse"])
    for name, ptxas in CANDIDATES.items():
        cand = candidate(args.work, name, ptxas, not args.compile_only)
        reused = compile_one(args, name, cand, run, os.path.join(args.work, name + ".o"))
        full = compile_one(args, name + "-full", cand, os.path.join(args.work, "fresh-" + name),
                           os.path.join(args.work, name + "-full.o"), {"CIQ_PTX_REUSE": "0"})
        same = reused["device_code_sha256"] == full["device_code_sha256"] and reused["device_code_sha256"]
        print("%s: %s %s sass=%s stats=%s kernels=%d" % (
            name, reused["ptx_reuse"], full["ptx_reuse"], "same" if same else "DIFFERENT",
            "same" if stats(reused) == stats(full) else "DIFFERENT", len(reused["kernels"])))
        if reused["device_code_sha256"] == base["device_code_sha256"]:
            print("%s: same SASS as the default compile (pick options that change the code)" % name)


if __name__ == "__main__":
    main()
