#!/usr/bin/env python3
"""Writes a ciq.lock (docs/lockfile.md) for the wrapper's lock-mode tests, with
the winner of Inputs/candidate.json; ACFs are copied to ciq-acf/<sha256>.acf.

  make_lock.py OUT --version 13.0.88 --arch sm_90 [--acf FILE]... [--device-code-from RECEIPTS]
               [--kernel KEY:DIRECTIVE:VALUE:LABEL]... [--kernel-unit KEY:UNIT:ARCH[,ARCH]]...

--device-code-from: the winner's device_code_sha256 from a tuning run's receipts
(fake_engine --receipts), combined as docs/wrapper.md "Device-code hash" says.
--kernel: a per-kernel control (winner.rendered.kernels[]); --kernel-unit: where
the tune found that kernel (kernel_units: UNIT relative to the lock's folder).
"""
import argparse
import hashlib
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import lock_hash  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--version", required=True)
p.add_argument("--arch", action="append", default=[])
p.add_argument("--acf", action="append", default=[])
p.add_argument("--device-code-from")
p.add_argument("--kernel", action="append", default=[])
p.add_argument("--kernel-unit", action="append", default=[])
a = p.parse_args()
kernels = []
for k in a.kernel:
    key, directive, value, label = k.split(":")
    kernels.append({"kernel": key, "directive": directive, "value": int(value), "label": label})
kernel_units = {}
for u in a.kernel_unit:
    key, unit, archs = u.split(":")
    kernel_units.setdefault(key, {})[unit] = archs.split(",")
here = os.path.dirname(os.path.abspath(__file__))
cand = json.load(open(os.path.join(here, "candidate.json")))
acfs = []
for f in a.acf:
    sha = hashlib.sha256(open(f, "rb").read()).hexdigest()
    d = os.path.join(os.path.dirname(os.path.abspath(a.out)), "ciq-acf")
    os.makedirs(d, exist_ok=True)
    shutil.copy(f, os.path.join(d, sha + ".acf"))
    acfs.append({"stage": "ptxas", "file": "ciq-acf/" + sha + ".acf", "sha256": sha})
candidate_hash = lock_hash.candidate_hash(cand["ptxas_options"], cand["nvcc_options"], cand["defines"], acfs,
                                          kernels)
device_code = ""
if a.device_code_from:
    receipts = [m for m in json.load(open(a.device_code_from)) if m.get("op") == "receipt"]
    per_object = sorted(r["device_code_sha256"] for r in receipts)
    device_code = hashlib.sha256("".join(h + "\n" for h in per_object).encode()).hexdigest()
lock = {
    "schema_version": 1,
    "engine_version": "0.1.0",
    "created_at": "2026-01-01T00:00:00Z",
    "target": "kernels",
    "compiler": {"nvcc": {"path": "/usr/local/cuda/bin/nvcc", "version": a.version},
                 "ptxas": {"path": "/usr/local/cuda/bin/ptxas", "version": a.version}},
    "architectures": a.arch,
    "gpu": {},
    "search_space": {},
    "winner": {"candidate_id": cand["candidate_id"], "candidate_hash": candidate_hash,
               "controls": {},
               "rendered": {"ptxas": cand["ptxas_options"], "nvcc": cand["nvcc_options"],
                            "defines": cand["defines"]},
               "acfs": acfs, "device_code_sha256": device_code},
    "score": {},
}
if kernels:
    lock["winner"]["rendered"]["kernels"] = kernels
if kernel_units:
    lock["kernel_units"] = kernel_units
lock["lock_sha256"] = lock_hash.lock_sha256(lock)  # as ciq writes it
with open(a.out, "w") as f:
    json.dump(lock, f, indent=2, sort_keys=True)
