#!/usr/bin/env python3
"""Writes a ciq.lock (docs/lockfile.md) for the wrapper's lock-mode tests, with
the winner of Inputs/candidate.json; ACFs are copied to ciq-acf/<sha256>.acf.

  make_lock.py OUT --version 13.0.88 --arch sm_90 [--acf FILE]... [--device-code-from RECEIPTS]

--device-code-from: the winner's device_code_sha256 from a tuning run's receipts
(fake_engine --receipts), combined as docs/wrapper.md "Device-code hash" says.
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
a = p.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
cand = json.load(open(os.path.join(here, "candidate.json")))
acfs = []
for f in a.acf:
    sha = hashlib.sha256(open(f, "rb").read()).hexdigest()
    d = os.path.join(os.path.dirname(os.path.abspath(a.out)), "ciq-acf")
    os.makedirs(d, exist_ok=True)
    shutil.copy(f, os.path.join(d, sha + ".acf"))
    acfs.append({"stage": "ptxas", "file": "ciq-acf/" + sha + ".acf", "sha256": sha})
candidate_hash = lock_hash.candidate_hash(cand["ptxas_options"], cand["nvcc_options"], cand["defines"], acfs)
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
lock["lock_sha256"] = lock_hash.lock_sha256(lock)  # as ciq writes it
with open(a.out, "w") as f:
    json.dump(lock, f, indent=2, sort_keys=True)
