#!/usr/bin/env python3
"""Prints one winner of a lock as JSON, for tests that read its fields.

  lock_section.py LOCK [ARCH]

A lock of schema 2 holds a section per architecture (docs/lockfile.md,
"Sections"): ARCH names one (sm_90), or the lock must have exactly one. A
lock of schema 1 is its own one winner. Exits 1 with one line otherwise."""
import json, sys

if len(sys.argv) not in (2, 3):
    sys.exit("usage: lock_section.py LOCK [ARCH]")
lock = json.load(open(sys.argv[1]))
arch = sys.argv[2] if len(sys.argv) == 3 else None
if lock.get("schema_version", 1) < 2:
    json.dump(lock, sys.stdout)
    sys.exit(0)
sections = lock["architectures"]
if arch is None:
    if len(sections) != 1:
        sys.exit(f"lock_section.py: {sys.argv[1]} has sections {sorted(sections)}: name one")
    arch = next(iter(sections))
if arch not in sections:
    sys.exit(f"lock_section.py: {sys.argv[1]} has no section {arch} (it has {sorted(sections)})")
json.dump(sections[arch], sys.stdout)
