"""Writes a sealed lock of sections for target k: lock.py OUT sm_80=32 [sm_90=40 ...]
(each section's winner a register cap, the control of Inputs/sections' spaces)."""
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
import lock_hash

sections = {}
for spec in sys.argv[2:]:
    arch, cap = spec.split("=")
    ptxas = ["--maxrregcount=" + cap]
    compiler = {"path": "/usr/local/cuda/bin/nvcc", "version": "13.0.88"}
    sections[arch] = {
        "compiler": {"nvcc": compiler, "ptxas": dict(compiler, path="/usr/local/cuda/bin/ptxas")},
        "winner": {"acfs": [], "candidate_id": "c0001", "controls": {"maxrregcount": int(cap)},
                   "candidate_hash": lock_hash.candidate_hash(ptxas, [], [], []),
                   "device_code_sha256": "0" * 64,
                   "rendered": {"defines": [], "nvcc": [], "ptxas": ptxas}}}
lock = {"schema_version": 2, "target": "k", "architectures": sections}
lock["lock_sha256"] = lock_hash.lock_sha256(lock)
json.dump(lock, open(sys.argv[1], "w"), indent=2)
