"""Starts `ciq tune --config CONFIG`, waits until its first benchmark run
(Inputs/slow_bench.py) wrote its pids to MARKER, kills the engine with
SIGKILL (only the engine, as a user's kill -9 would) and prints which of the
run's processes are still alive S seconds later.

usage: kill_during_run.py <ciq> <config> <marker> <S>"""
import os
import signal
import subprocess
import sys
import time

ciq, cfg, marker, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])


def pids():
    try:
        return [int(x) for x in open(marker).read().split()]
    except (OSError, ValueError):
        return []


def alive(pid):
    try:
        state = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


engine = subprocess.Popen([ciq, "tune", "--config", cfg, "--no-canary", "--no-lock"],
                          stdout=open(cfg + ".out", "w"), stderr=subprocess.STDOUT)
deadline = time.time() + 180
while len(pids()) < 2 and time.time() < deadline and engine.poll() is None:
    time.sleep(0.05)
if len(pids()) < 2:
    print("no benchmark run started (engine exit %s); see %s.out" % (engine.poll(), cfg))
    engine.kill()
    sys.exit(1)
os.kill(engine.pid, signal.SIGKILL)
engine.wait()
start = time.time()
while any(alive(p) for p in pids()) and time.time() - start < limit:
    time.sleep(0.02)
left = [p for p in pids() if alive(p)]
print("benchmark processes left after %g s: %s" % (limit, "%d" % len(left) if left else "none"))
for p in left:
    try:
        os.kill(p, signal.SIGKILL)
    except OSError:
        pass
