"""Rewrites the journal's warm line (docs/journal.md) with points that are
not of the search's space, as a hand edit would (its line_sha256 removed,
so the line is read as a journal of an earlier ciq): `ciq resume` must say
the line is damaged and go on without it (it aborted rendering them).

usage: damage_warm_line.py <journal.jsonl>
"""
import json
import sys

path = sys.argv[1]
lines = []
damaged = 0
for line in open(path).read().splitlines():
    j = json.loads(line)
    if j.get("op") == "warm":
        j.pop("line_sha256", None)
        j["points"] = [[5, 7], [0]]
        line = json.dumps(j)
        damaged += 1
    lines.append(line)
open(path, "w").write("\n".join(lines) + "\n")
print("damaged %d warm line(s)" % damaged)
