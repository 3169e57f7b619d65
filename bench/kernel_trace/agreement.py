"""kernel_time_ms against the program's own timer on the same binaries
(issue 39): two builds A and B of one benchmark that prints time_ms=<ms>,
each run `runs` times untraced (its own timer, as a user measures it) and
`runs` times traced by ciq's CUPTI injection (the GPU time of its kernels
matching `kernels`, all by default: kernel_time_ms), interleaved A B B A.
Prints each build's medians and the two ratios B/A: they agree when
kernel_time_ms ranks builds as the program's own timer does. The own timer
of a traced run is not used: CUPTI's start-up lands in the first timed
launch of a program that times launch by launch (measured on the H200: +5.3
ms over 10 launches of bench/kernel_trace/notimer).

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


def untraced(side, i):
    out = subprocess.run(builds[side], capture_output=True, text=True, timeout=120).stdout
    m = re.findall(r"time_ms=([0-9.eE+-]+)", out)
    if not m:
        sys.exit("%s run %d: no time_ms= in its output" % (side, i))
    own[side].append(float(m[-1]))


def traced(side, i):
    prefix = os.path.join(tmp, "%s%d" % (side, i))
    env = dict(os.environ, CUDA_INJECTION64_PATH=lib, CIQ_KERNEL_TRACE=prefix)
    subprocess.run(builds[side], env=env, capture_output=True, text=True, timeout=120)
    total = 0.0
    for f in glob.glob(prefix + ".*.json"):
        d = json.load(open(f))
        if d["status"] != "ok":
            sys.exit("%s: trace status %s %s" % (f, d["status"], d.get("error", "")))
        for k in d["kernels"]:
            if not pattern or re.search(pattern, k["name"]):
                total += k["total_ns"] / 1e6
    if total <= 0:
        sys.exit("%s run %d: the traced run timed no kernel" % (side, i))
    gpu[side].append(total)


for i in range(runs):
    for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
        untraced(side, i)
        traced(side, i)
med = {k: (statistics.median(own[k]), statistics.median(gpu[k])) for k in own}
for k in ("A", "B"):
    print("%s: own timer (untraced) median %.4f ms, kernel_time_ms (traced) median %.4f ms, %d runs each  (%s)" % (
        k, med[k][0], med[k][1], runs, " ".join(builds[k])))
ro, rg = med["B"][0] / med["A"][0], med["B"][1] / med["A"][1]
print("ratio B/A: own timer %.4f, kernel_time_ms %.4f, difference %+.2f%%" % (ro, rg, 100 * (rg - ro) / ro))
