"""Issue 55 item 1: no reserve line exceeds the time left. Reads tune outputs
and checks every "phase: NAME (elapsed E of T, about L left)" line (L at most
T - E) and every "keeping about R for ..." line (R at most T - the elapsed
time it names).

usage: reserve_within.py <tune output>...
"""
import re
import sys


def seconds(text):
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    if not m or not text:
        raise SystemExit("not a duration: %r" % text)
    h, mi, s = (int(g or 0) for g in m.groups())
    return h * 3600 + mi * 60 + s


bad = []
for path in sys.argv[1:]:
    budget = None
    for line in open(path, errors="replace"):
        m = re.search(r"time budget (\S+) \(--time", line)
        if m:
            budget = seconds(m.group(1))
        m = re.search(r"phase: \S.* \(elapsed (\S+) of (\S+), about (\S+) left\)", line)
        if m:
            e, t, left = (seconds(g) for g in m.groups())
            if left > max(0, t - e) + 1:   # rounded to the second; past the budget, 0s left
                bad.append("%s: %s" % (path, line.strip()))
        m = re.search(r"ended at (\S+) .*keeping about (\S+) for", line)
        if m and budget is not None:
            at, keep = seconds(m.group(1)), seconds(m.group(2))
            if keep > max(0, budget - at) + 1:
                bad.append("%s: %s" % (path, line.strip()))
if bad:
    print("reserve over the time left:\n" + "\n".join(bad))
else:
    print("reserves within the time left: %d file(s)" % len(sys.argv[1:]))
