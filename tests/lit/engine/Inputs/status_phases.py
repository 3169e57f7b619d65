"""Runs `ciq tune` and asks `ciq status` every 0.2 s while it runs (issue 49
item 6): prints the phases status reported, in order, and whether every
answer had the phase, the elapsed and the remaining seconds.

usage: status_phases.py <ciq> <tune's stdout file> <tune args...>
"""
import json
import subprocess
import sys
import time

ciq, out, args = sys.argv[1], sys.argv[2], sys.argv[3:]
config = args[args.index("--config") + 1]
with open(out, "w") as f:
    tune = subprocess.Popen([ciq, "tune"] + args, stdout=f, stderr=subprocess.STDOUT)
    phases, complete, answers, refused = [], True, 0, ""

    while tune.poll() is None:
        s = subprocess.run([ciq, "status", "--config", config], capture_output=True, text=True)
        if s.returncode != 0 and not refused:
            refused = s.stderr.strip()
        if s.returncode == 0:
            try:
                j = json.loads(s.stdout)
            except ValueError:
                j = {}
            if j:
                answers += 1
                complete = complete and all(k in j for k in ("phase", "elapsed_s", "remaining_s"))
                if j.get("phase") and (not phases or phases[-1] != j["phase"]):
                    phases.append(j["phase"])
        time.sleep(0.2)
print("tune exit:", tune.returncode)
print("status phases:", " ".join(phases))
print("every answer has phase, elapsed_s, remaining_s:", complete and answers > 0)
print("answers: %d; first refusal: %s" % (answers, refused or "none"))
