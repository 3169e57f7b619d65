"""A time budget that holds a few binaries on this machine as loaded now
(issue 55: time-budget.test's own setting, never a product default): reads
the baseline's build and measurement from a journal and prints
"<factor x its cost>s", at least <least> seconds. A tune of 13 binaries that
each cost about a baseline does not fit in 5 of them on an idle host or a
loaded one: the time, not the binaries, ends its search.

usage: calibrated_time.py <journal.jsonl> <factor> <least seconds>
"""
import json
import math
import sys

journal, factor, least = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
cost = None
for line in open(journal):
    j = json.loads(line)
    if j.get("op") == "evaluation" and j.get("candidate_id") == "c0000":
        cost = (j.get("build_ms", 0) + j.get("measure_ms", 0)) / 1000.0
if cost is None:
    sys.exit("no baseline in %s" % journal)
print("%ds" % max(least, math.ceil(factor * cost)))
