"""The attribution under a spent time budget (time-cuts.test): skipped, the
verdict the finalists', only where the finalists measured the program the
lock builds; where the rehearsed program differs from the copy they ran (or
they ran none), it runs past the budget, said so, and the verdict is taken
on the rehearsed program. Prints which held; exits 1 naming what broke it.

usage: attribution_rule.py <tune output> <journal.jsonl>
"""
import json
import sys

out = open(sys.argv[1]).read()
rows = sum(1 for line in open(sys.argv[2]) if json.loads(line).get("op") == "attribution")
differs = ("rehearsal: the rehearsed program differs from the copy the finalists measured" in out
           or "the finalists did not run a copy of this build" in out)
if differs:
    want = ["time budget: attribution runs past the budget", "the verdict is taken on what the lock builds",
            "attribution (each against the baseline"]
    missing = [w for w in want if w not in out]
    if missing or rows != 1 or "attribution skipped" in out:
        sys.exit("attribution_rule: the rehearsed program differs, yet %s (journal attribution records: %d)"
                 % ("missing: " + "; ".join(missing) if missing else "it was skipped", rows))
    print("rehearsed program differs: attribution measured it past the budget")
else:
    if "time budget: attribution skipped: it needs about" not in out or rows != 0:
        sys.exit("attribution_rule: the finalists measured the lock's program, yet the attribution was not "
                 "skipped (journal attribution records: %d)" % rows)
    print("finalists measured the lock's program: attribution skipped, the verdict the finalists'")
