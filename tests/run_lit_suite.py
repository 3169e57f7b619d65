#!/usr/bin/env python3
"""Runs one lit suite for CTest and reports it skipped (exit 77, the suite's
SKIP_RETURN_CODE) when nothing failed but tests were UNSUPPORTED: tests that
need what this machine lacks (the Slurm test cluster without the slurm
packages, or not as root) are neither failed nor silently counted as passed.

usage: run_lit_suite.py <lit command and arguments...>
"""
import re
import subprocess
import sys

SKIP = 77

out = []
p = subprocess.Popen(sys.argv[1:] + ["--show-unsupported"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                     universal_newlines=True)
for line in p.stdout:
    sys.stdout.write(line)
    out.append(line)
rc = p.wait()
text = "".join(out)
unsupported = re.search(r"^\s*Unsupported\s*:\s*(\d+)", text, re.M)
if rc == 0 and unsupported and int(unsupported.group(1)) > 0:
    reasons = [l.split("note:", 1)[1].strip() for l in out if "note:" in l]
    sys.stdout.write("skipped: %s test(s) UNSUPPORTED here (%s); the others passed\n" %
                     (unsupported.group(1), "; ".join(reasons) or "see the lines above"))
    sys.exit(SKIP)
sys.exit(rc)
