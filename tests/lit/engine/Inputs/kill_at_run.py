"""Runs a benchmark command and, on run number argv[2] (counted in the file
argv[1] over every run of every build), sends SIGKILL to its parent process
first: a user's kill -9 of `ciq tune` at a chosen point of a phase (the
finalists, the minimization, the attribution). N = 0 never kills.

usage: kill_at_run.py <counter file> <N> <command...>
"""
import os
import signal
import subprocess
import sys


def engine_pid():
    """The engine: the run's parent, or the parent of the ciq-build-guard
    that leads the run (benchmark runs are guarded since issue 51 item 7)."""
    pid = os.getppid()
    try:
        if open("/proc/%d/comm" % pid).read().strip() == "ciq-build-guard":
            pid = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return pid

counter, n, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
with open(counter, "a") as f:
    f.write("run\n")
runs = sum(1 for _ in open(counter))
if runs == n:
    os.kill(engine_pid(), signal.SIGKILL)
    sys.exit(1)
sys.exit(subprocess.run(command).returncode)
