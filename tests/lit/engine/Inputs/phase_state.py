"""Prints what a tune's run_dir holds after a phase was cut short: the
journal's ops after the search (finalists, minimize, attribution, winner,
done), its evaluations (id, runs) and whether they equal those of a copy of
the journal taken before the resume (nothing measured may be lost or
measured twice).

usage: phase_state.py <journal.jsonl> [<journal taken earlier>]
"""
import json
import sys


def load(path):
    return [json.loads(line) for line in open(path) if line.strip()]


lines = load(sys.argv[1])
evals = [(e["candidate_id"], e["runs"]) for e in lines if e["op"] == "evaluation"]
after = [e["op"] for e in lines if e["op"] in ("finalists", "minimize", "attribution", "winner", "done")]
print("phases:", " ".join(after) or "none")
print("evaluations:", " ".join("%s/%d" % (i, len(r)) for i, r in evals))
if len(sys.argv) > 2:
    before = [(e["candidate_id"], e["runs"]) for e in load(sys.argv[2]) if e["op"] == "evaluation"]
    print("search kept:", before == evals)
