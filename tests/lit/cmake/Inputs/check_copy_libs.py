#!/usr/bin/env python3
"""Checks a program copy of the search (<run dir>/programs/<candidate>) for a
shared library of the project: its command carries a manifest
(CIQ_BUILD_ARTIFACTS=) with a copy of LIB in the copy's folder, placed where
LIB is, and the copied program loads LIB from that place (ldd), where each
run puts the copy.

  check_copy_libs.py COPY_DIR LIB
"""
import json
import os
import subprocess
import sys

copy_dir, lib = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
run_dir = os.path.dirname(os.path.dirname(copy_dir))


def at(p):
    return os.path.realpath(p if os.path.isabs(p) else os.path.join(run_dir, p))


cmd = json.load(open(os.path.join(copy_dir, "command.json")))
if isinstance(cmd, dict):   # the copy's folder and build tree recorded beside the command
    cmd = cmd["command"]
manifest = [a.split("=", 1)[1] for a in cmd if a.startswith("CIQ_BUILD_ARTIFACTS=")]
print("manifest: %s" % bool(manifest))
entries = json.load(open(at(manifest[0]))) if manifest else []
mine = [e for e in entries if at(e["place"]) == lib]
print("library placed: %s" % bool(mine))
copy = at(mine[0]["copy"]) if mine else ""
print("copy in the folder: %s" % (copy.startswith(copy_dir + "/") and os.path.isfile(copy)))
print("same size: %s" % (bool(copy) and os.path.getsize(copy) == os.path.getsize(lib)))
program = [at(a) for a in cmd if "=" not in a and at(a).startswith(copy_dir + "/") and os.access(at(a), os.X_OK)]
loads = subprocess.run(["ldd", program[0]], capture_output=True, text=True).stdout if program else ""
found = [l.split("=>", 1)[1].split("(")[0].strip() for l in loads.splitlines() if os.path.basename(lib) in l]
print("program loads it from its place: %s" % (bool(found) and os.path.realpath(found[0]) == lib))
