"""Holds the GPU lock (an exclusive flock on argv[1], as another process's
`ciq tune` measuring on the GPU does) while the command after "--" runs with
its output in argv[3]; once that output says the command waits for the GPU
("waiting for GPU"), holds it argv[2] seconds more, then lets it go. The
command's wait is thus at least argv[2] seconds however slow the host is
(issue 55 item 1: time waited for another process's GPU lock is reported
apart, not counted in a binary's cost). Exits with the command's status.

usage: hold_gpu_while.py <lock file> <seconds> <output file> -- <command...>
"""
import fcntl
import os
import subprocess
import sys
import time

lock, hold, output = sys.argv[1], float(sys.argv[2]), sys.argv[3]
command = sys.argv[sys.argv.index("--") + 1:]
os.makedirs(os.path.dirname(lock), exist_ok=True)
with open(lock, "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.truncate(0)
    f.write("pid %d (test): hold_gpu_while.py\n" % os.getpid())
    f.flush()
    with open(output, "w") as out:
        tune = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    while tune.poll() is None and "waiting for GPU" not in open(output, errors="replace").read():
        time.sleep(0.2)
    if tune.poll() is None:
        time.sleep(hold)
    fcntl.flock(f, fcntl.LOCK_UN)
sys.exit(tune.wait())
