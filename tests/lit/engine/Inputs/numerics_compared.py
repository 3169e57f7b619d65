"""For default-space.test (issue 21): reads a run directory's journal and,
for every measured candidate that set one of nvcc's numerics controls,
checks that nvcc got the option and that its log holds a correctness run
(the output comparison against the baseline's).

usage: numerics_compared.py <run dir>
prints "numerics candidates: N", then one "<id> not compared" or "<id> not
rendered" line per failure, then "all compared" when there is none."""
import json
import os
import sys

NUMERICS = {"ftz": "--ftz=", "prec-div": "--prec-div=", "prec-sqrt": "--prec-sqrt=", "use-fast-math": "--use_fast_math"}
run = sys.argv[1]
count, bad = 0, []
for line in open(os.path.join(run, "journal.jsonl")):
    e = json.loads(line)
    if e.get("op") != "evaluation" or e.get("duplicate_of") or not e.get("stopped_by"):
        continue
    set_ = [c for c in e["controls"] if c in NUMERICS]
    if not set_:
        continue
    count += 1
    nvcc = " ".join(e["rendered"].get("nvcc", []))
    for c in set_:
        if NUMERICS[c] not in nvcc:
            bad.append("%s not rendered: %s missing from %s" % (e["candidate_id"], c, nvcc))
    log = open(e["log"]).read() if os.path.exists(e["log"]) else ""
    if "=== correctness: " not in log:
        bad.append(e["candidate_id"] + " not compared")
print("numerics candidates:", count)
for b in bad:
    print(b)
if not bad:
    print("all compared")
