"""A benchmark command that kills the engine running it: on its run number
argv[2] (counted in the file argv[1]) it sends SIGKILL to its parent process,
as a user's kill -9 of `ciq tune` during a candidate's benchmark would."""
import os
import signal
import sys

with open(sys.argv[1], "a") as f:
    f.write("run\n")
runs = sum(1 for _ in open(sys.argv[1]))
if runs == int(sys.argv[2]):
    os.kill(os.getppid(), signal.SIGKILL)
print("time_ms=1.0")
