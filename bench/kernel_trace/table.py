"""Prints the per-kernel table of one traced run: every <prefix>.<pid>.json
libciq-kernel-trace wrote (bench/kernel_trace_gpu.sh).

usage: table.py <prefix>
"""
import glob
import json
import re
import subprocess
import sys

prefix = sys.argv[1]
files = sorted(f for f in glob.glob(prefix + ".*.json") if re.fullmatch(r"\d+", f[len(prefix) + 1:-5]))
if not files:
    sys.exit("no trace: no process wrote %s.<pid>.json (did the injection load?)" % prefix)
kernels = {}
for f in files:
    d = json.load(open(f))
    print("%s: status %s%s, CUPTI %s (%s), %d records, %d dropped" % (
        f, d["status"], (": " + d["error"]) if d["error"] else "", d["cupti"], d["cupti_version"],
        d.get("records", 0), d.get("dropped_records", 0)))
    for k in d["kernels"]:
        m = kernels.setdefault(k["name"], dict(k, total_ns=0, launches=0))
        m["total_ns"] += k["total_ns"]
        m["launches"] += k["launches"]
names = list(kernels)
try:
    demangled = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
except OSError:
    demangled = names
total = sum(k["total_ns"] for k in kernels.values()) or 1
print("%-60s %8s %12s %7s %14s %10s %5s %6s" % ("kernel", "launches", "gpu_ms", "share", "grid", "block", "regs",
                                                  "smem"))
for name, dm in sorted(zip(names, demangled), key=lambda p: -kernels[p[0]]["total_ns"]):
    k = kernels[name]
    print("%-60s %8d %12.4f %6.1f%% %14s %10s %5d %6d" % (
        (dm or name)[:60], k["launches"], k["total_ns"] / 1e6, 100.0 * k["total_ns"] / total,
        "x".join(map(str, k["grid"])), "x".join(map(str, k["block"])), k["registers"],
        k["static_shared_bytes"] + k["dynamic_shared_bytes"]))
print("total_gpu_ms=%.6f" % (total / 1e6))
