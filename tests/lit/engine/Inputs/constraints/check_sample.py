"""Reads `ciq sample` output on stdin; exits 1 when a candidate breaks
TILE % VEC == 0 or TILE * VEC <= 128 (both set), prints how many it read."""
import re
import sys

n = 0
for line in sys.stdin:
    if line.startswith("#"):
        continue
    d = dict(re.findall(r"-D(\w+)=(\d+)", line))
    n += 1
    if "TILE" in d and "VEC" in d:
        t, v = int(d["TILE"]), int(d["VEC"])
        if t % v or t * v > 128:
            print("infeasible:", line.strip())
            sys.exit(1)
print("candidates:", n)
