"""Starts `ciq tune --config CONFIG --no-lock`, waits until N evaluations are
in the journal and a compile of the next one runs, and kills the engine with
SIGKILL (only the engine, as a user's kill -9 would).

usage: kill_mid_build.py <ciq> <config> <run dir> <N>
       kill_mid_build.py --wait <run dir>   (until no process of its builds is left)
       kill_mid_build.py --gone-within S <run dir>   (prints whether none is left after S seconds)"""
import json
import os
import signal
import subprocess
import sys
import time

def builds(run):
    tag = ("CIQ_RUN_DIR=" + run).encode()
    found = 0
    for pid in os.listdir("/proc"):
        try:
            found += tag in open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
        except (OSError, ValueError):
            pass
    return found


def leftover(run):
    tag = ("CIQ_RUN_DIR=" + run).encode()
    names = []
    for pid in os.listdir("/proc"):
        try:
            if tag in open("/proc/%s/environ" % pid, "rb").read().split(b"\0"):
                names.append(open("/proc/%s/comm" % pid, errors="replace").read().strip())
        except (OSError, ValueError):
            pass
    return names


if sys.argv[1] == "--gone-within":
    limit, run = float(sys.argv[2]), os.path.realpath(sys.argv[3])
    deadline = time.time() + limit
    while leftover(run) and time.time() < deadline:
        time.sleep(0.02)
    left = leftover(run)
    print("build processes left after %g s: %s" % (limit, " ".join(sorted(left)) if left else "none"))
    sys.exit(0)

if sys.argv[1] == "--wait":
    deadline = time.time() + 120
    while builds(os.path.realpath(sys.argv[2])) and time.time() < deadline:
        time.sleep(0.05)
    sys.exit(0)

ciq, cfg, run, n = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3]), int(sys.argv[4])


def evaluations():
    try:
        return sum(1 for line in open(os.path.join(run, "journal.jsonl"), "rb") if b'"evaluation"' in line)
    except FileNotFoundError:
        return 0


def compiling():
    tag = ("CIQ_RUN_DIR=" + run).encode()
    for pid in os.listdir("/proc"):
        try:
            if tag in open("/proc/%s/environ" % pid, "rb").read().split(b"\0") and \
                    open("/proc/%s/comm" % pid, errors="replace").read().strip() in ("cicc", "ptxas", "cudafe++", "fatbinary"):
                return True
        except (OSError, ValueError):
            pass
    return False


p = subprocess.Popen([ciq, "tune", "--fresh", "--config", cfg, "--no-lock"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
deadline = time.time() + 300
while not (evaluations() >= n and compiling()):
    if p.poll() is not None or time.time() > deadline:
        sys.exit("the search ended before the kill point")
    time.sleep(0.005)
p.send_signal(signal.SIGKILL)
p.wait()
print("killed during the build of evaluation %d" % (evaluations() + 1))
