"""What a run's journal holds (issue 55 item 6, time-cuts.test): the
evaluations, the run count of each build in the last finalists' row, and
how many minimization and attribution records.

usage: count_ops.py <journal.jsonl>
"""
import json
import sys

ops = [json.loads(line) for line in open(sys.argv[1])]
finalists = [e for e in ops if e.get("op") == "finalists"]
runs = [len(r["values"]) for r in finalists[-1]["rows"]] if finalists else "none"
print("evaluations: %d; finalists runs: %s; minimize: %d; attribution: %d" % (
    sum(1 for e in ops if e.get("op") == "evaluation"), runs,
    sum(1 for e in ops if e.get("op") == "minimize"), sum(1 for e in ops if e.get("op") == "attribution")))
