"""kernel_time_ms against the program's own timer on the same binaries
(issue 39): two builds A and B of one benchmark that prints time_ms=<ms>,
each run `runs` times, interleaved A B B A, every run traced by ciq's CUPTI
injection. Prints, per build, the median of its own timer and of the traced
GPU time of its kernels (matching `kernels`, all by default), and the two
ratios B/A: they agree when the traced time measures what the timer does.

usage: agreement.py <libciq-kernel-trace.so> <runs> <kernels regex or ''> <A argv...> -- <B argv...>
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

lib, runs, pattern = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rest = sys.argv[4:]
cut = rest.index("--")
builds = {"A": rest[:cut], "B": rest[cut + 1:]}
tmp = tempfile.mkdtemp(prefix="ciq-agreement-")
own = {"A": [], "B": []}
gpu = {"A": [], "B": []}


def run(side, i):
    prefix = os.path.join(tmp, "%s%d" % (side, i))
    env = dict(os.environ, CUDA_INJECTION64_PATH=lib, CIQ_KERNEL_TRACE=prefix)
    out = subprocess.run(builds[side], env=env, capture_output=True, text=True, timeout=120).stdout
    m = re.findall(r"time_ms=([0-9.eE+-]+)", out)
    total = 0.0
    for f in glob.glob(prefix + ".*.json"):
        d = json.load(open(f))
        if d["status"] != "ok":
            sys.exit("%s: trace status %s %s" % (f, d["status"], d.get("error", "")))
        for k in d["kernels"]:
            if not pattern or re.search(pattern, k["name"]):
                total += k["total_ns"] / 1e6
    if not m or total <= 0:
        sys.exit("%s run %d: own time %s, traced %.6f ms: nothing to compare" % (side, i, m, total))
    own[side].append(float(m[-1]))
    gpu[side].append(total)


for i in range(runs):
    for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
        run(side, i)
med = {k: (statistics.median(own[k]), statistics.median(gpu[k])) for k in own}
for k in ("A", "B"):
    print("%s: own timer median %.4f ms, traced kernel time median %.4f ms, %d runs  (%s)" % (
        k, med[k][0], med[k][1], runs, " ".join(builds[k])))
ro, rg = med["B"][0] / med["A"][0], med["B"][1] / med["A"][1]
print("ratio B/A: own timer %.4f, kernel_time_ms %.4f, difference %+.2f%%" % (ro, rg, 100 * (rg - ro) / ro))
