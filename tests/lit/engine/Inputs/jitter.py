"""A noisy benchmark for the engine's lit tests (issue 21): runs the stand-in
program (Inputs/standin: prints time_ms=<t>, t set by the candidate's
build) and prints a time with seeded, known noise instead.

usage: jitter.py <mode> <seed> <state.json> <program> [args...]

The noise of a run depends on the seed, on which build runs (its time
without noise, to 0.1 ms) and on how many times that build ran before (kept
in state.json), so every run of a test is the same on every checkout. Modes, comma-separated:
  gauss=P     Gaussian noise, standard deviation P% of t
  drift=P     run i of a build is slower by i x P%
  first=P     the first run of each build is slower by P%
  bimodal=P   each run is, by a coin flip, P% slower or not
  mirror=M    report 2M - t: a faster build becomes a slower one (racing tests)
"""
import json
import os
import random
import re
import subprocess
import sys

mode, seed, state_path, program = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
out = subprocess.run(program, capture_output=True, text=True, check=True).stdout
t = float(re.search(r"time_ms=([-0-9.eE+]+)", out).group(1))

# The build, by what it prints without the stand-in's own noise (sd 0.01 ms;
# its deterministic times are multiples of 0.1 ms): not by the program's
# bytes, which differ between checkouts and would make the draws differ too.
build = "t%d" % round(t * 10)
state = json.load(open(state_path)) if os.path.exists(state_path) else {}
i = state.get(build, 0)
state[build] = i + 1
json.dump(state, open(state_path, "w"))

rng = random.Random("%s:%s:%d" % (seed, build, i))
opts = dict(kv.split("=") for kv in mode.split(",") if kv)
if "mirror" in opts:
    t = 2 * float(opts["mirror"]) - t
factor = 1.0
if "drift" in opts:
    factor += i * float(opts["drift"]) / 100
if "first" in opts and i == 0:
    factor += float(opts["first"]) / 100
if "bimodal" in opts and rng.random() < 0.5:
    factor += float(opts["bimodal"]) / 100
if "gauss" in opts:
    factor += rng.gauss(0, float(opts["gauss"]) / 100)
print("time_ms=%.6f" % (t * factor))
