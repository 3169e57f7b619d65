"""Kills `ciq tune` with SIGKILL at several moments, resumes it each time
with `ciq resume`, and compares the finished search with an uninterrupted
one of the same seed: same evaluations in the same order (none lost, none
repeated), same rows of results.csv, same winner.

usage: kill_resume.py <ciq> <dir holding resume.yaml and the build tree>

Kill points: right after start (the journal holds only its start line),
during the build of a candidate (its build log has begun), and between two
evaluations (as soon as an evaluation line reaches the journal).
Only the engine is killed, as a user's kill -9 would: the build it was
driving is an orphan that fails once its compiler wrapper finds no engine;
the script waits for it (processes with this run's CIQ_RUN_DIR) to end
before resuming."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

ciq, work = sys.argv[1], sys.argv[2]
TIMEOUT = 240


def config(name):
    """A copy of resume.yaml with its own run directory."""
    path = os.path.join(work, name + ".yaml")
    text = open(os.path.join(work, "resume.yaml")).read()
    with open(path, "w") as f:
        f.write(text + "run_dir: run-%s\n" % name)
    return path, os.path.join(work, "run-" + name)


def journal(run_dir):
    lines = []
    try:
        with open(os.path.join(run_dir, "journal.jsonl")) as f:
            for line in f:
                try:
                    lines.append(json.loads(line))
                except ValueError:
                    pass  # a line torn by the kill
    except FileNotFoundError:
        pass
    return lines


def evaluations(run_dir):
    return [j for j in journal(run_dir) if j.get("op") == "evaluation"]


def wait_for(what, cond, proc):
    deadline = time.time() + TIMEOUT
    while not cond():
        if proc.poll() is not None:
            sys.exit("the engine ended (exit %s) before %s" % (proc.returncode, what))
        if time.time() > deadline:
            proc.kill()
            sys.exit("timed out waiting for " + what)
        time.sleep(0.01)


def orphans(run_dir):
    """Processes of the build the killed engine was driving."""
    tag = ("CIQ_RUN_DIR=" + run_dir).encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if tag in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def kill(proc, run_dir, label):
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n = len(evaluations(run_dir))
    left = orphans(run_dir)
    deadline = time.time() + TIMEOUT
    while orphans(run_dir) and time.time() < deadline:
        time.sleep(0.05)
    print("kill -9 %s: %d evaluations in the journal, %s" %
          (label, n, "an orphaned build was running" if left else "no build was running"))
    return n


def start(args, log):
    return subprocess.Popen([ciq] + args + ["--no-lock"], stdout=open(log, "a"), stderr=subprocess.STDOUT)


# The uninterrupted search.
ref_cfg, ref_run = config("ref")
shutil.rmtree(ref_run, ignore_errors=True)
rc = subprocess.call([ciq, "tune", "--config", ref_cfg, "--no-lock"], stdout=open(ref_run + ".log", "w"),
                     stderr=subprocess.STDOUT)
if rc != 0:
    sys.exit("the uninterrupted search failed (exit %d); see %s.log" % (rc, ref_run))

# The same search, killed three times.
cfg, run = config("killed")
shutil.rmtree(run, ignore_errors=True)
log = run + ".log"
open(log, "w").close()

p = start(["tune", "--config", cfg], log)
wait_for("the journal's start line", lambda: any(j.get("op") == "start" for j in journal(run)), p)
kill(p, run, "right after start")

p = start(["resume", "--config", cfg], log)
wait_for("a build in progress", lambda: len(evaluations(run)) >= 2 and
         os.path.exists(os.path.join(run, "logs", "c%04d.log" % len(evaluations(run)))), p)
time.sleep(0.3)  # well into the compile
kill(p, run, "during the build of a candidate")

p = start(["resume", "--config", cfg], log)
before = len(evaluations(run))
wait_for("an evaluation line", lambda: len(evaluations(run)) > before, p)
kill(p, run, "between two evaluations")

rc = subprocess.call([ciq, "resume", "--config", cfg, "--no-lock"], stdout=open(log, "a"), stderr=subprocess.STDOUT)
if rc != 0:
    sys.exit("the last resume failed (exit %d); see %s" % (rc, log))

# Compare.
KEYS = ["candidate_id", "generation", "point", "candidate_hash", "status", "reason", "scores",
        "device_code_sha256", "duplicate_of", "duplicate_kind"]
ref = [{k: e.get(k) for k in KEYS} for e in evaluations(ref_run)]
got = [{k: e.get(k) for k in KEYS} for e in evaluations(run)]
ids = [e["candidate_id"] for e in got]
print("evaluations: %d uninterrupted, %d killed and resumed" % (len(ref), len(got)))
print("candidate ids: %s" % ("consecutive, none repeated" if ids == ["c%04d" % i for i in range(len(ids))]
                             else "WRONG: " + " ".join(ids)))
print("journal evaluations: %s" % ("identical" if ref == got else "DIFFERENT"))
for a, b in zip(ref, got):
    if a != b:
        print("  first difference:\n    uninterrupted %s\n    resumed       %s" % (a, b))
        break


def winner(run_dir):
    w = [j for j in journal(run_dir) if j.get("op") == "winner"]
    return w[-1].get("candidate_id") if w else None


print("winner: %s uninterrupted, %s resumed" % (winner(ref_run), winner(run)))

STABLE = ["candidate_id", "generation", "status", "reason", "baseline", "pareto", "duplicate_of", "duplicate_kind",
          "score", "score_unit", "candidate_hash", "device_code_sha256", "controls", "rendered", "registers",
          "spill_bytes"]


def rows(run_dir):
    with open(os.path.join(run_dir, "results.csv"), newline="") as f:
        return [[r[c] for c in STABLE] for r in csv.DictReader(f)]


print("results.csv rows: %s" % ("identical" if rows(ref_run) == rows(run) else "DIFFERENT"))
# `ciq sample <pool_size>` is the search's first generation.
sample = subprocess.run([ciq, "sample", "3", "--config", ref_cfg], capture_output=True, text=True).stdout.split("\n")
sampled = [line.split()[1] for line in sample if line[:1] == " "]
gen1 = [e["candidate_hash"][:12] for e in evaluations(ref_run) if e["generation"] == 1]
print("ciq sample 3: %s" % ("generation 1 of the search" if sampled == gen1[:3] else
                             "DIFFERENT from generation 1: %s vs %s" % (sampled, gen1)))
