"""Turns the journal of an exhaustive `ciq tune` into a landscape.json for
bench/search_efficiency: every point with its status, scores and -- for
runtime objectives -- every benchmark run, so a replay can draw noisy
measurements. Refuses a journal that does not cover every point of the space.
usage: journal_to_landscape.py <journal.jsonl> <landscape dir> <name>
"""
import json
import os
import sys

if len(sys.argv) != 4:
    sys.exit(__doc__)
journal, folder, name = sys.argv[1:]
import yaml
space = yaml.safe_load(open(os.path.join(folder, "space.yaml")))
controls = [c["name"] for c in space["controls"]]
lines = [json.loads(l) for l in open(journal) if l.strip()]
start = next(l for l in lines if l.get("op") == "start")
evals = {e["candidate_id"]: e for e in lines if e.get("op") == "evaluation"}
points = {}
for e in evals.values():
    src = evals.get(e.get("duplicate_of") or "", e)   # a duplicate shares its first's result
    rec = {"point": e["point"], "status": e["status"]}
    if e["status"] == "OK":
        rec["scores"] = [src["scores"][o["metric"]] for o in start["objectives"]]
        # The device code measured: a twin's is its first's (issue 30: the
        # search benchmark counts binaries measured, not configurations).
        if src.get("device_code_sha256"):
            rec["binary"] = src["device_code_sha256"][:16]
        runs = src.get("runs") or e.get("runs")
        if runs:
            rec["runs"] = runs
    else:
        rec["reason"] = e.get("reason", "")
    points[tuple(e["point"])] = rec
if len(points) != start["space_size"]:
    sys.exit("journal_to_landscape: error: %s covers %d of %d points; run the exhaustive search to the end"
             % (journal, len(points), start["space_size"]))
runtime = any("runs" in p for p in points.values())
doc = {"name": name, "kind": "runtime" if runtime else "compile", "space_identity": start["space_identity"],
       "controls": controls, "objectives": start["objectives"], "scalar_weights": [1] if runtime else [1024, 1],
       "recipe": {"command": "ciq tune (strategy exhaustive) + bench/landscapes/journal_to_landscape.py",
                  "engine_version": start.get("engine_version"), "started_at": start.get("started_at")},
       "points": sorted(points.values(), key=lambda p: p["point"])}
json.dump(doc, open(os.path.join(folder, "landscape.json"), "w"), indent=1)
print("journal_to_landscape: %s: %d points (%s)" % (name, len(points), doc["kind"]))
