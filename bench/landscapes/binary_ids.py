"""Gives each point of a runtime landscape recorded before landscapes carried
device-code identities its `binary`: the recording (`ciq tune`, strategy
exhaustive) measured every distinct binary once, and journal_to_landscape.py
gave each twin the runs of the point it was a twin of, so points with the same
recorded runs are one binary (two measured binaries never give the same list
of run times to the microsecond). An INVALID point is its own binary. A point
that already has a `binary` keeps it.
usage: binary_ids.py <landscape.json>...
"""
import hashlib
import json
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
for path in sys.argv[1:]:
    doc = json.load(open(path))
    derived = 0
    for p in doc["points"]:
        if "binary" in p:
            continue
        if p["status"] == "OK" and p.get("runs"):
            key = json.dumps(p["runs"])
        else:
            key = "point " + json.dumps(p["point"])
        p["binary"] = "runs:" + hashlib.sha256(key.encode()).hexdigest()[:12]
        derived += 1
    if derived:
        doc.setdefault("recipe", {})["binary_ids"] = (
            "derived by bench/landscapes/binary_ids.py: equal recorded runs = one binary "
            "(a twin's runs were its first's)")
    json.dump(doc, open(path, "w"), indent=1)
    print("binary_ids: %s: %d points, %d distinct binaries, %d ids derived" %
          (path, len(doc["points"]), len({p["binary"] for p in doc["points"]}), derived))
