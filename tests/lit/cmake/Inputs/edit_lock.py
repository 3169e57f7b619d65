#!/usr/bin/env python3
"""Writes a copy of base.lock (a hand-written ciq.lock) with some fields changed,
for the ciq_apply_lock tests. The compiler versions default to those of the
nvcc and ptxas given, so the lock matches this machine unless a test says not."""
import argparse, json, os, re, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import lock_hash  # noqa: E402

def version(tool):
    out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    return re.search(r"V(\d+\.\d+\.\d+)", out).group(1)

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--nvcc", required=True)
p.add_argument("--nvcc-version")
p.add_argument("--ptxas-version")
p.add_argument("--arch", action="append", help="replaces the architectures")
p.add_argument("--ptxas", action="append", help="replaces winner.rendered.ptxas")
p.add_argument("--acf", action="append", default=[], help="STAGE:FILE:SHA256")
p.add_argument("--target", help="replaces the target the lock was frozen for")
p.add_argument("--raw", help="write this text instead of JSON")
p.add_argument("--build-type", help="records the build configuration tuned in (\"build\")")
p.add_argument("--device-debug", action="store_true", help="with --build-type: tuned with -G")
p.add_argument("--lineinfo", action="store_true", help="with --build-type: tuned with -lineinfo")
a = p.parse_args()
if a.raw is not None:
    open(a.out, "w").write(a.raw)
    raise SystemExit(0)
lock = json.load(open(os.path.join(os.path.dirname(__file__), "base.lock")))
ptxas = os.path.join(os.path.dirname(a.nvcc), "ptxas")
lock["compiler"]["nvcc"] = {"path": a.nvcc, "version": a.nvcc_version or version(a.nvcc)}
lock["compiler"]["ptxas"] = {"path": ptxas, "version": a.ptxas_version or version(ptxas)}
if a.arch:
    lock["architectures"] = a.arch
if a.target:
    lock["target"] = a.target
if a.build_type is not None:
    lock["build"] = {"build_type": a.build_type, "device_debug": a.device_debug, "lineinfo": a.lineinfo}
if a.ptxas is not None:
    lock["winner"]["rendered"]["ptxas"] = a.ptxas
for spec in a.acf:
    stage, f, sha = spec.split(":")
    lock["winner"]["acfs"].append({"stage": stage, "file": f, "sha256": sha})
# A lock ciq could have written: its candidate_hash matches the edited winner.
w = lock["winner"]
w["candidate_hash"] = lock_hash.candidate_hash(w["rendered"]["ptxas"], w["rendered"]["nvcc"],
                                               w["rendered"]["defines"], w["acfs"])
lock["lock_sha256"] = lock_hash.lock_sha256(lock)
json.dump(lock, open(a.out, "w"), indent=2, sort_keys=True)
