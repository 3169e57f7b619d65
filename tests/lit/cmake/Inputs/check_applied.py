#!/usr/bin/env python3
"""Checks that a build applies a lock: every compile of the named sources in
compile_commands.json carries the winner's rendered options in the forms
ciq_apply_lock() writes (-Xptxas=<opt>, nvcc options as is, -D<define>): a
lock of one section (a build for one architecture) or of schema 1.
Prints the options found; exits 1 naming the first one missing."""
import json, shlex, sys

lock_path, cc_path, *sources = sys.argv[1:]
lock = json.load(open(lock_path))
if lock.get("schema_version", 1) >= 2:
    if len(lock["architectures"]) != 1:
        sys.exit(f"check_applied: {lock_path} has sections {sorted(lock['architectures'])}; this check reads one")
    lock = next(iter(lock["architectures"].values()))
rendered = lock["winner"]["rendered"]
wanted = (["-Xptxas=" + o.replace("\\", "\\\\").replace(",", "\\,") for o in rendered["ptxas"]]
          + rendered["nvcc"] + ["-D" + d for d in rendered["defines"]])
if not wanted:
    sys.exit("check_applied: the lock's winner renders no option (the baseline won)")
commands = {e["file"].split("/")[-1]: shlex.split(e["command"]) for e in json.load(open(cc_path))}
for src in sources:
    if src not in commands:
        sys.exit(f"check_applied: {src} is not in {cc_path}")
    for opt in wanted:
        if opt not in commands[src]:
            sys.exit(f"check_applied: {src} is compiled without {opt}")
print("applied to", " ".join(sources) + ":", " ".join(wanted))
