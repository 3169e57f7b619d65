#!/usr/bin/env python3
"""Kills in every phase after the search (issue 49 item 3): the figures of
"resume redoes nothing measured", as a script.

Runs a seeded tune of the CPU stand-in (tests/lit/engine/Inputs/standin
behind Inputs/jitter.py: 1% Gaussian noise, -DBLOCK=256 10% faster, a ptxas
control that changes the binary but not the time after the search, so the
minimization drops it and the attribution measures new builds)
uninterrupted, then the same tune killed with SIGKILL once in the middle of
each phase after the search (finalists, minimization, attribution: at a
benchmark run, as Inputs/kill_at_run.py does; rehearsal: as soon as the
journal's minimize line is written, while the lock's build runs), each
followed by `ciq resume`, and prints per kill:

  runs        benchmark runs of the killed tune and its resume together
  repeated    runs beyond the uninterrupted tune's (the run the kill cut
              short, which never measured, is not counted)
  replayed    runs the resume took from the journal
  winner      whether the lock names the uninterrupted tune's winner

Goal: repeated 0 in every phase. Exit status 1 otherwise.

usage: phase_kills.py --ciq BIN --module-dir DIR --work DIR [--repeats 3]
e.g.   python3 bench/phase_kills.py --ciq build/bin/ciq \\
           --module-dir build/lib/cmake/CompileIQ --work /tmp/ciq-phase-kills
(also `bench/kill_hang.py --phase-kills`)
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--ciq", required=True)
p.add_argument("--module-dir", required=True)
p.add_argument("--work", required=True)
p.add_argument("--repeats", type=int, default=3)
args = p.parse_args()
ciq, work = os.path.abspath(args.ciq), os.path.abspath(args.work)
INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lit", "engine", "Inputs")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
shutil.copytree(os.path.join(INPUTS, "standin"), os.path.join(work, "proj"))
build = os.path.join(work, "build")
subprocess.check_call(["cmake", "-S", os.path.join(work, "proj"), "-B", build, "-G", "Ninja",
                       "-DCompileIQ_DIR=" + os.path.abspath(args.module_dir)], stdout=subprocess.DEVNULL)
for f in ("jitter.py", "kill_at_run.py"):
    shutil.copy(os.path.join(INPUTS, f), build)
TEMPLATE = open(os.path.join(INPUTS, "adaptive.yaml")).read()


def config(name, kill_at):
    text = TEMPLATE.replace("RUNDIR", name).replace("MODE", "gauss=1")
    text = text.replace("  MEASURE", "  repeats: %d" % args.repeats)
    text = re.sub(r"(?m)^lockfile: .*", "lockfile: %s.lock" % name, text)
    text = text.replace("  command: [", '  command: [python3, kill_at_run.py, %s.count, "%d", ' % (name, kill_at), 1)
    text += '    - name: cache\n      ptxas: "--def-load-cache={}"\n      literal: cg\n'
    path = os.path.join(work, name + ".yaml")
    open(path, "w").write(text)
    return path


def journal(name):
    out = []
    try:
        for line in open(os.path.join(work, name, "journal.jsonl")):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    except FileNotFoundError:
        pass
    return out


def count(name):
    try:
        return sum(1 for _ in open(os.path.join(build, name + ".count")))
    except FileNotFoundError:
        return 0


def winner(name):
    try:
        l = json.load(open(os.path.join(work, name + ".lock")))
        return (next(iter(l["architectures"].values())) if l.get("schema_version", 1) >= 2 else l)["winner"]["candidate_id"]
    except (OSError, ValueError, KeyError):
        return None


def tune(name, kill_at=0, kill_on_op=None):
    """ciq tune, killed at benchmark run kill_at or once the journal has an
    `op` line kill_on_op; then ciq resume when it was killed."""
    cfg = config(name, kill_at)
    log = open(os.path.join(work, name + ".log"), "w")
    proc = subprocess.Popen([ciq, "tune", "--config", cfg], stdout=log, stderr=subprocess.STDOUT, cwd=work)
    if kill_on_op:
        while proc.poll() is None and not any(j.get("op") == kill_on_op for j in journal(name)):
            time.sleep(0.005)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
    rc = proc.wait()
    killed = rc == -signal.SIGKILL
    if killed:
        time.sleep(0.5)   # the killed build's processes end (ciq-build-guard)
        r = subprocess.run([ciq, "resume", "--config", cfg], stdout=log, stderr=subprocess.STDOUT, cwd=work)
        if r.returncode != 0:
            sys.exit("%s: the resume failed (exit %d); see %s" % (name, r.returncode, log.name))
    text = open(log.name).read()
    m = re.search(r"resumed: (\d+) run", text)
    return killed, count(name), int(m.group(1)) if m else 0


start = time.time()
_, ref_runs, _ = tune("ref")
ref_winner = winner("ref")
# Where each phase's runs are, from the uninterrupted journal: the search's
# evaluations, then the run lines in order.
j = journal("ref")
at = sum(len(e["runs"]) for e in j if e["op"] == "evaluation")
spans = {}
for e in j:
    if e["op"] == "run":
        phase = e["key"].split(":")[0].split("/")[0]
        at += 1
        spans[phase] = (spans.get(phase, (at, at))[0], at)
print("uninterrupted: %d benchmark runs (search %d), winner %s; runs by phase: %s" % (
    ref_runs, sum(len(e["runs"]) for e in j if e["op"] == "evaluation"), ref_winner,
    ", ".join("%s %d-%d" % (k, lo, hi) for k, (lo, hi) in spans.items())))
print("%-14s %-10s %6s %9s %9s %7s" % ("kill in", "at", "runs", "repeated", "replayed", "winner"))
bad = 0
for phase in ("finalists", "minimization", "rehearsal", "attribution"):
    name = "kill-" + phase
    if phase == "rehearsal":
        killed, runs, replayed = tune(name, kill_on_op="minimize")
        where, cut = "build", 0
    else:
        if phase not in spans:
            print("%-14s (no runs in the uninterrupted tune)" % phase)
            continue
        lo, hi = spans[phase]
        n = (lo + hi + 1) // 2
        killed, runs, replayed = tune(name, kill_at=n)
        where, cut = "run %d" % n, 1
    repeated = runs - ref_runs - cut
    same = winner(name) == ref_winner
    bad += repeated != 0 or not same or not killed
    print("%-14s %-10s %6d %9d %9d %7s%s" % (phase, where, runs, repeated, replayed, "same" if same else "DIFFERS",
                                              "" if killed else "  (not killed: the tune ended first)"))
print("wall time %.0f s" % (time.time() - start))
sys.exit(1 if bad else 0)
