#!/usr/bin/env python3
"""Prints "<arch> <registers>" for each entry ptxas -v reported in a build
log ("Compiling entry function '...' for 'sm_90'", then "Used N registers"),
sorted by architecture: which cap reached which architecture's SASS."""
import re
import sys

found, arch = {}, None
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Compiling entry function '[^']*' for '(sm_[0-9]+[af]?)'", line)
    if m:
        arch = m.group(1)
    m = re.search(r"Used ([0-9]+) registers", line)
    if m and arch:
        found[arch] = m.group(1)
        arch = None
for a in sorted(found, key=lambda a: int(re.sub(r"[^0-9]", "", a))):
    print(a, found[a])
