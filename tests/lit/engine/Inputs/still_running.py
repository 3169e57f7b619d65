"""Of the processes argv[1] lists ("<pid> <start time>" lines, written by
processes a test started), prints how many were recorded and how many still
run, then ends those with SIGKILL by pid (a failing run leaves nothing)."""
import os
import signal
import sys


def running(pid, start):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == start and fields[0] not in ("Z", "X")


recorded = [line.split() for line in open(sys.argv[1]) if line.strip()]
alive = [int(pid) for pid, start in recorded if running(int(pid), start)]
print("recorded: %d, still running: %d" % (len(recorded), len(alive)))
for pid in alive:
    os.kill(pid, signal.SIGKILL)
