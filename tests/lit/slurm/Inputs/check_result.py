"""Prints the parts of a `ciq worker` result record that the test checks."""
import json
import sys

r = json.load(open(sys.argv[1]))
print("status %s reason %s" % (r["status"], r["reason"] or "-"))
print("candidate %s hash %s" % (r["candidate_id"], r["candidate_hash"]))
print("registers %s" % r["scores"].get("registers"))
print("device code %s" % ("hashed" if len(r["device_code_sha256"]) == 64 else "MISSING"))
s = r.get("slurm", {})
print("node %s, started <= finished: %s" % (r.get("node") == s.get("node") != "", s["started_at"] <= s["finished_at"]))
print("message: %s" % r["message"])
