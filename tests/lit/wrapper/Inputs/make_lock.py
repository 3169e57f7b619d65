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
# candidate_hash as common/Lockfile.h defines it (compact JSON, keys sorted).
rendered_for_hash = {"acfs": [[x["stage"], x["sha256"]] for x in acfs], "defines": cand["defines"],
                     "nvcc": cand["nvcc_options"], "ptxas": cand["ptxas_options"]}
candidate_hash = hashlib.sha256(json.dumps(rendered_for_hash, separators=(",", ":"), sort_keys=True,
                                           ensure_ascii=False).encode()).hexdigest()
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
with open(a.out, "w") as f:
    json.dump(lock, f, indent=2, sort_keys=True)
