"""candidate_hash as common/Lockfile.h defines it, for test fixtures that write
a ciq.lock by hand: SHA-256 of the compact JSON (keys sorted)
{"acfs":[[stage,sha256],...],"defines":[...],"nvcc":[...],"ptxas":[...]}, plus
"kernels":[[kernel,directive,value],...] when there are per-kernel controls and
"units":[{"nvcc":[...],"ptxas":[...],"unit":...},...] when there are per-unit options."""
import hashlib
import json


def candidate_hash(ptxas, nvcc, defines, acfs, kernels=None, units=None):
    """acfs: [{"stage": ..., "sha256": ...}, ...]; kernels: [{"kernel", "directive", "value"}, ...];
    units: [{"unit", "ptxas", "nvcc"}, ...]"""
    rendered = {"acfs": [[a["stage"], a["sha256"]] for a in acfs], "defines": defines,
                "nvcc": nvcc, "ptxas": ptxas}
    if kernels:
        rendered["kernels"] = [[k["kernel"], k["directive"], k["value"]] for k in kernels]
    if units:
        rendered["units"] = units
    text = json.dumps(rendered, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def lock_sha256(lock):
    """lock_sha256 as common/Lockfile.h defines it: SHA-256 of the compact JSON
    (keys sorted) of every other key. A fixture that stands for a lock ciq wrote
    carries it; one without it reads with a warning (docs/lockfile.md)."""
    rest = {k: v for k, v in lock.items() if k != "lock_sha256"}
    text = json.dumps(rest, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
