#!/usr/bin/env python3
"""Compiles one translation unit through ciq-ptxas under the fake engine with
per-kernel controls (kernel_directives), with the real nvcc/ptxas, and prints
per candidate what FileCheck compares: how the object was made, each
directive's outcome, and each kernel's registers and spill bytes from the
receipt.

  kernel_controls_check.py --work DIR --ciq-ptxas P --fake-engine CMD
        --candidate NAME=DIRECTIVES [...] -- compiler args (without -o)...

DIRECTIVES: comma-separated KERNEL_REGEX:directive=value (the kernel is
matched against the baseline's receipt and sent as its kernelKey, which the
test reads from the receipt's kernel names: x for the masked hex digits).
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys


def key(mangled):
    """common/KernelDirective.h kernelKey: the path-derived hex of an anonymous namespace masked."""
    k = re.sub(r"_GLOBAL__N__([0-9a-f]+)_", lambda m: "_GLOBAL__N__" + "x" * len(m.group(1)) + "_", mangled)
    return re.sub(r"_INTERNAL_([0-9a-f]+)_([0-9]+)_",
                  lambda m: "_INTERNAL_" + "x" * len(m.group(1)) + "_" + "x" * len(m.group(2)) + "_", k)


def compile_one(args, name, directives, run_dir, need_object=True):
    cand = os.path.join(args.work, name + ".json")
    with open(cand, "w") as f:
        json.dump({"candidate_id": name, "candidate_hash": "0" * 64, "ptxas_options": args.ptxas,
                   "nvcc_options": [], "defines": args.defines if name != "base" else [], "acfs": [],
                   "compile_timeout_s": 0, "need_object": need_object, "kernel_directives": directives}, f)
    receipts = os.path.join(args.work, name + ".receipts.json")
    # One output path for every candidate, as a build has: PTX reuse keys a
    # translation unit by its command, -o included.
    out = os.path.join(args.work, "out" + args.suffix)
    cmd = shlex.split(args.fake_engine) + ["--candidate", cand, "--receipts", receipts, "--run-dir", run_dir, "--"]
    cmd += [args.ciq_ptxas] + args.compiler + ["-o", out]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in r.stdout.splitlines():
        if "error" in line or "warning" in line:
            print("%s: output: %s" % (name, line))
    if r.returncode != 0:
        print("%s: exit %d" % (name, r.returncode))
        return None
    shutil.copyfile(out, os.path.join(args.work, name + args.suffix))
    rc = [x for x in json.load(open(receipts)) if x.get("op") != "hello"]
    return rc[-1]


def report(name, rc):
    if rc is None:
        return
    print("%s: %s sha=%s" % (name, rc.get("ptx_reuse", "?"), rc.get("device_code_sha256", "")[:12]))
    for d in rc.get("directives", []):
        print("%s: directive %s=%d %s %s %s" % (name, d["directive"], d["value"], d["arch"], d["status"], d.get("note", "")))
    for k in rc.get("kernels", []):
        if k.get("entry", True):
            ptx = k.get("ptx")
            print("%s: kernel %s %s registers=%d spill=%d%s" % (
                name, k.get("demangled") or k["name"], k["arch"], k["registers"], k["spill_stores"] + k["spill_loads"],
                "" if ptx is None else " maxntid=%d minnctapersm=%d" % (ptx["max_threads"], ptx["min_blocks"])))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--ciq-ptxas", required=True)
    p.add_argument("--fake-engine", required=True)
    p.add_argument("--candidate", action="append", default=[])
    p.add_argument("--ptxas", action="append", default=[])
    p.add_argument("--define", dest="defines", action="append", default=[])
    p.add_argument("--private-run", action="store_true", help="each candidate its own run directory")
    p.add_argument("--suffix", default=".o")
    p.add_argument("compiler", nargs=argparse.REMAINDER)
    args = p.parse_args()
    args.compiler = args.compiler[1:] if args.compiler[:1] == ["--"] else args.compiler
    os.makedirs(args.work, exist_ok=True)
    run = os.path.join(args.work, "run")
    base = compile_one(args, "base", [], run)
    report("base", base)
    names = [k["name"] for k in (base or {}).get("kernels", [])]
    for spec in args.candidate:
        name, _, text = spec.partition("=")
        directives = []
        for item in filter(None, text.split(",")):
            pattern, _, dv = item.partition(":")
            d, _, v = dv.partition("=")
            matched = [n for n in names if re.search(pattern, n)] or [pattern]
            directives.append({"kernel": key(matched[0]), "directive": d, "value": int(v)})
        rd = os.path.join(args.work, "run-" + name) if args.private_run else run
        report(name, compile_one(args, name, directives, rd))


if __name__ == "__main__":
    main()
