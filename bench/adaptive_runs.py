#!/usr/bin/env python3
"""Benchmark runs a finished tune spent, read from its run directory (for
bench/adaptive_gpu.sh, issue 21).

usage: adaptive_runs.py <run dir>
prints one line:
  search N finalists N attribution N total N starts N
- search: the measured runs of every candidate the search measured (the
  journal's evaluation records, `runs`, duplicates left out: the figure of
  the summary's "benchmark runs:" line and the sum of results.csv's `runs`);
- finalists: the interleaved re-measurement after the search (journal op
  "finalists", each row's `values`);
- attribution: the attribution's rows (journal op "attribution", `runs`);
- total: the three together;
- starts: every process start of the benchmark command in the run's logs
  (<run dir>/logs/*.log, "=== benchmark: " headers), which adds the warm-up
  runs and the minimization's re-measurements the journal does not count.
Exit 1 with one line on stderr when the run directory has no journal."""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: adaptive_runs.py <run dir>")
    run = sys.argv[1]
    journal = os.path.join(run, "journal.jsonl")
    if not os.path.exists(journal):
        sys.exit("adaptive_runs: error: no %s; is %s the run_dir of a tune?" % (journal, run))
    search = finalists = attribution = 0
    with open(journal) as f:
        for line in f:
            e = json.loads(line)
            op = e.get("op")
            if op == "evaluation" and e.get("stopped_by") and not e.get("duplicate_kind"):
                search += len(e.get("runs", []))
            elif op == "finalists":
                finalists += sum(len(r.get("values", [])) for r in e.get("rows", []))
            elif op == "attribution":
                attribution += sum(int(r.get("runs", 0)) for r in e.get("rows", []))
    starts = 0
    for log in glob.glob(os.path.join(run, "logs", "*.log")):
        with open(log, errors="replace") as f:
            starts += sum(1 for line in f if line.startswith("=== benchmark: "))
    print("search %d finalists %d attribution %d total %d starts %d"
          % (search, finalists, attribution, search + finalists + attribution, starts))


if __name__ == "__main__":
    main()
