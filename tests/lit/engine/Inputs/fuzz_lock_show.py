#!/usr/bin/env python3
"""Runs `ciq lock show|acfs|render|verify` on mutated locks (issue 51 item 4,
issue 56 item 3): from one lock with every field engine/winner/LockWriter.cpp
writes (score with attribution, validation, minimization, rehearsal,
measurement, finalists' measurement and cases; build mode with its units;
tune targets; per-kernel controls and their units; per-unit options; an
ACF; the rehearsed build's device-code sections; the search space's
sources), every node of the free-form score and extra keys in turn gets
each value of another type (null included), and a fixed-seed generator
does the same at random nodes of the rest; each lock is re-sealed
(lock_sha256) so it reads as ciq's own, and each action runs. `verify`
compares with an object NVCC compiled. A run that dies of a signal (abort:
exit 134) or prints "terminate called" is a crash; an error line is fine.
The same again for a lock of schema 2 (a section per architecture, issue
57) with that winner in two sections.

  fuzz_lock_show.py CIQ WORKDIR [CASES [NVCC]]
"""
import hashlib
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import lock_hash  # noqa: E402

ciq, work = sys.argv[1], sys.argv[2]
cases = int(sys.argv[3]) if len(sys.argv) > 3 else 60
nvcc_path = sys.argv[4] if len(sys.argv) > 4 else "/usr/local/cuda/bin/nvcc"
os.makedirs(work, exist_ok=True)
ptxas, nvcc, defines = ["--maxrregcount=64"], ["-Xptxas=-O3"], ["TILE=4"]
kernels = [{"kernel": "_Z4kernPf", "directive": "maxnreg", "value": 64, "label": "kern"}]
units = [{"unit": "k.cu", "ptxas": ["--opt-level=1"], "nvcc": []}]
# An ACF beside the lock, as the tune copies it (ciq-acf/<sha256>.acf).
acf_text = b"# an ACF\n"
acf_sha = hashlib.sha256(acf_text).hexdigest()
os.makedirs(os.path.join(work, "ciq-acf"), exist_ok=True)
with open(os.path.join(work, "ciq-acf", acf_sha + ".acf"), "wb") as f:
    f.write(acf_text)
acfs = [{"stage": "ptxas", "file": "ciq-acf/%s.acf" % acf_sha, "sha256": acf_sha}]
# The object `verify` reads: a real compile of a one-kernel unit.
with open(os.path.join(work, "k.cu"), "w") as f:
    f.write("__global__ void kern(float *p) { p[threadIdx.x] *= 2.0f; }\n")
subprocess.run([nvcc_path, "-c", "-arch=sm_90", "k.cu", "-o", "k.o"], cwd=work, check=True)
measurement = {"exclusive": True, "gpu_before": {"name": "H100", "temperature_c": 36, "throttle": []},
               "gpu_after": {"name": "H100", "temperature_c": 38, "throttle": []}}
lock = {
    "schema_version": 1, "engine_version": "0.1.0", "created_at": "2026-01-01T00:00:00Z", "target": "app",
    "compiler": {"nvcc": {"path": "/usr/local/cuda/bin/nvcc", "version": "13.0.88"},
                 "ptxas": {"path": "/usr/local/cuda/bin/ptxas", "version": "13.0.88"}},
    "architectures": ["sm_90"], "gpu": {"name": "H100"},
    "search_space": {"identity": "12" * 32, "controls": 3,
                     "sources": [{"name": "ptxas-13.0-default", "provider": "builtin", "tag": "", "sha256": "34" * 32}]},
    "winner": {"candidate_id": "c0004",
               "candidate_hash": lock_hash.candidate_hash(ptxas, nvcc, defines, acfs, kernels, units),
               "controls": {"maxrreg": "64", "TILE": 4},
               "rendered": {"ptxas": ptxas, "nvcc": nvcc, "defines": defines, "kernels": kernels, "units": units},
               "acfs": acfs, "device_code_sha256": "ab" * 32},
    "score": {"objective": "time_ms", "direction": "minimize", "unit": "ms", "aggregate": "median",
              "baseline": 2.0, "winner": 1.5, "speedup": 1.33, "cv_percent": 1.0, "p_value": 0.001,
              "baseline_device_code_sha256": "cd" * 32,
              "attribution": [{"step": "winner", "runs": 10, "p_value": 0.01, "median": 1.5}],
              "validation": {"runs": 10, "baseline_median": 2.0, "winner_median": 1.5, "p_value": 0.001,
                             "unit": "ms", "validated_at": "2026-01-02T00:00:00Z"},
              "objectives": {"time_ms": {"baseline": 2.0, "winner": 1.5, "unit": "ms"}},
              "minimization": {"from": "c0004", "steps": [{"removed": "TILE", "dropped": True, "detail": "x"}]},
              "rehearsal": {"candidate_id": "c0004", "build_ms": 1200.0, "route": "ciq-ptxas --lock"},
              "measurement": measurement, "finalists_measurement": measurement,
              "cases": [{"name": "small", "winner_median": 1.5, "winner_runs": 10, "winner_noise_percent": 1.0,
                         "ratio": 1.33, "p_value": 0.01, "baseline_median": 2.0, "baseline_runs": 10,
                         "baseline_noise_percent": 1.0}]},
    "tune_targets": ["lib"], "tuned_architecture": "sm_90", "device_code_architecture": "sm_90",
    "build": {"build_type": "Release", "device_debug": False, "lineinfo": False,
              "device_debug_units": ["d.cu"], "lineinfo_units": ["k.cu"]},
    "device_code_sections": {"k.cu": ["sm_90 .text._Z4kernPf: " + "56" * 32]},
    "device_code_units": {"k.cu": "ef" * 32},
    "kernel_units": {"_Z4kernPf": {"k.cu": ["sm_90"]}},
}
values = [None, 5, 1.5, "x", True, [], {}, [None], {"k": None}]


def nodes(j, at, out, inside):
    out.append((at, inside))
    if isinstance(j, dict):
        for k, v in j.items():
            nodes(v, at + [k], out, inside or k in ("score", "tune_targets", "tuned_architecture",
                                                    "device_code_architecture", "build", "device_code_units",
                                                    "kernel_units", "device_code_sections"))
    elif isinstance(j, list):
        for i, v in enumerate(j):
            nodes(v, at + [i], out, inside)


def put(j, at, v):
    for k in at[:-1]:
        j = j[k]
    j[at[-1]] = v


def run(doc, at, actions):
    global runs, crashes
    doc.pop("lock_sha256", None)
    doc["lock_sha256"] = lock_hash.lock_sha256(doc)
    path = os.path.join(work, "ciq.lock")
    with open(path, "w") as f:
        json.dump(doc, f)
    rcs = []
    for action in actions:
        r = subprocess.run([ciq, "lock", action[0], path] + action[1:], capture_output=True, text=True,
                           errors="replace", cwd=work, timeout=60)
        runs += 1
        rcs.append(r.returncode)
        if r.returncode < 0 or r.returncode >= 128 or "terminate called" in r.stderr:
            crashes += 1
            print("crash: ciq lock %s (exit %d) with %s = %s: %s" % (action[0], r.returncode,
                  "/".join(map(str, at)), json.dumps(value_at(doc, at)), r.stderr.strip()[-300:]))
    return rcs


def value_at(j, at):
    for k in at:
        j = j[k]
    return j


SHOW = [["show"]]
SHOW = [["show"]]
VERIFY = [["verify", "--object", "k.o"]]
ALL = SHOW + VERIFY + [["acfs"], ["render", "--nvcc", "/usr/local/cuda/bin/nvcc", "--nvcc-version", "13.0.88",
                                  "--ptxas-version", "13.0.88", "--architectures", "90"]]


def sectioned(one):
    """The schema-2 lock of two sections (sm_80, sm_90) with `one`'s winner."""
    body = {k: v for k, v in one.items() if k not in ("schema_version", "target", "architectures")}
    body["measured"] = "compile-only"
    return {"schema_version": 2, "target": one["target"], "engine_version": one["engine_version"],
            "created_at": one["created_at"],
            "architectures": {"sm_80": json.loads(json.dumps(body)), "sm_90": json.loads(json.dumps(body))}}


def fuzz(base, label, seed):
    print("base lock%s: exit %s" % (label, run(json.loads(json.dumps(base)), [], SHOW + VERIFY)))
    if not label:
        # The base lock's verify reaches the comparison (its winner is not k.o's code).
        v = subprocess.run([ciq, "lock", "verify", os.path.join(work, "ciq.lock"), "--object", "k.o"], cwd=work,
                           capture_output=True, text=True, errors="replace")
        print("base verify: %s" % (v.stderr.strip().splitlines() or [""])[0])
    all_nodes = []
    nodes(base, [], all_nodes, False)
    free = [a for a, inside in all_nodes if inside and a]
    fixed = [a for a, inside in all_nodes if not inside and a]
    # Each node with each value under `show`; under `verify`, with one value
    # per node in turn (bounded: `verify` reads the object each time).
    for n, at in enumerate(free):
        for i, v in enumerate(values):
            doc = json.loads(json.dumps(base))
            put(doc, at, v)
            run(doc, at, SHOW + (VERIFY if i == n % len(values) else []))
    rng = random.Random(seed)
    for i in range(cases):
        doc = json.loads(json.dumps(base))
        at = rng.choice(fixed + free)
        put(doc, at, rng.choice(values))
        run(doc, at, ALL)


runs = crashes = 0
fuzz(lock, "", 51)
fuzz(sectioned(lock), " (sections)", 57)
print("lock runs: %d, crashes: %d" % (runs, crashes))
sys.exit(1 if crashes else 0)
