"""A benchmark command that kills the engine running it: on its run number
argv[2] (counted in the file argv[1]) it sends SIGKILL to its parent process,
as a user's kill -9 of `ciq tune` during a candidate's benchmark would."""
import os
import signal
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

with open(sys.argv[1], "a") as f:
    f.write("run\n")
runs = sum(1 for _ in open(sys.argv[1]))
if runs == int(sys.argv[2]):
    os.kill(engine_pid(), signal.SIGKILL)
print("time_ms=1.0")
