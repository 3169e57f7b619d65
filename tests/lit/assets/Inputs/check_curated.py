#!/usr/bin/env python3
"""Checks every value of every ptxas/nvcc control of ciq's curated spaces
against the installed compilers: ptxas compiles a small PTX file with it,
nvcc validates it with --dryrun. A curated space must never hold an option
the compiler it names rejects.

usage: check_curated.py <spaces dir> <ptxas> <nvcc> <scratch dir>
"""
import glob
import os
import subprocess
import sys

import yaml

spaces, ptxas, nvcc, scratch = sys.argv[1:5]
os.makedirs(scratch, exist_ok=True)
ptx = os.path.join(scratch, "k.ptx")
cu = os.path.join(scratch, "k.cu")
with open(ptx, "w") as f:
    f.write(".version 9.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(.param .u64 p) {\n ret;\n}\n")
with open(cu, "w") as f:
    f.write("__global__ void k(float *a) { a[0] = sqrtf(a[1]) / a[2]; }\n")


def values(control):
    if "choice" in control:
        return control["choice"]
    if "range" in control:
        r = control["range"]
        return list(range(r["start"], r["end"] + 1, r.get("step", 1)))
    if "literal" in control:
        return [control["literal"]]
    return []


def render(option, value):
    if isinstance(value, bool):
        value = "true" if value else "false"
    return option.replace("{}", str(value))


failures, checked = [], 0
files = sorted(glob.glob(os.path.join(spaces, "*.yaml")))
assert files, f"no curated spaces in {spaces}"
for path in files:
    doc = yaml.safe_load(open(path))
    for control in doc.get("controls", []):
        for value in values(control):
            if "ptxas" in control:
                cmd = [ptxas, "-arch=sm_90", render(control["ptxas"], value), ptx,
                       "-o", os.path.join(scratch, "k.cubin")]
            elif "nvcc" in control:
                cmd = [nvcc, "--dryrun", "-arch=sm_90", "-c", render(control["nvcc"], value), cu,
                       "-o", os.path.join(scratch, "k.o")]
            else:
                continue
            checked += 1
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{os.path.basename(path)}: {control['name']}={value}: {r.stderr.strip()}")
print(f"checked {checked} control values in {len(files)} curated spaces")
for f in failures:
    print("REJECTED", f)
sys.exit(1 if failures or checked == 0 else 0)
