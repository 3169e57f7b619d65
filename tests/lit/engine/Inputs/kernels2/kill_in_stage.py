"""kill -9 of `ciq tune` inside the per-kernel stage, then `ciq resume`: the
finished search must equal an uninterrupted one (the same candidates in the
same order, none lost or repeated, the same winner).

usage: kill_in_stage.py <ciq> <uninterrupted yaml> <killed yaml> <kill after N evaluations>
"""
import json
import os
import signal
import subprocess
import sys
import time

ciq, ref_cfg, cfg, after = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def run_dir(path):
    for line in open(path):
        if line.startswith("run_dir:"):
            return os.path.join(os.path.dirname(path), line.split(":", 1)[1].strip())


def journal(rd):
    out = []
    try:
        for line in open(os.path.join(rd, "journal.jsonl")):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass  # a line torn by the kill
    except FileNotFoundError:
        pass
    return out


def evaluations(rd):
    return [j for j in journal(rd) if j.get("op") == "evaluation"]


if subprocess.call([ciq, "tune", "--config", ref_cfg, "--no-lock"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.STDOUT) != 0:
    sys.exit("the uninterrupted search failed")
rd = run_dir(cfg)
p = subprocess.Popen([ciq, "tune", "--config", cfg, "--no-lock"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
deadline = time.time() + 240
while len(evaluations(rd)) < after:
    if p.poll() is not None or time.time() > deadline:
        sys.exit("the search ended or stalled before %d evaluations" % after)
    time.sleep(0.01)
p.send_signal(signal.SIGKILL)
p.wait()
print("kill -9 with %d evaluations in the journal" % len(evaluations(rd)))
time.sleep(1)  # the killed engine's build ends (its compiles watch the engine)
if subprocess.call([ciq, "resume", "--config", cfg, "--no-lock"], stdout=open(rd + ".resume.log", "w"),
                   stderr=subprocess.STDOUT) != 0:
    sys.exit("the resume failed: see %s.resume.log" % rd)
KEYS = ["candidate_id", "generation", "point", "candidate_hash", "status", "device_code_sha256"]
ref = [{k: e.get(k) for k in KEYS} for e in evaluations(run_dir(ref_cfg))]
got = [{k: e.get(k) for k in KEYS} for e in evaluations(rd)]
print("evaluations: %d uninterrupted, %d killed and resumed, %s" % (len(ref), len(got),
                                                                    "identical" if ref == got else "DIFFERENT"))
win = lambda d: [j.get("candidate_id") for j in journal(d) if j.get("op") == "winner"][-1:]
print("winner: %s" % ("the same" if win(run_dir(ref_cfg)) == win(rd) else "DIFFERENT"))
