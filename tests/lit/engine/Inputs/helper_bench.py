"""Benchmark of setsid-child.test: starts a helper in a session of its own
that keeps stdout open (as a daemon a benchmark starts would), appends
"<pid> <start time>" of it to argv[1], prints the time and exits at once."""
import os
import subprocess
import sys

helper = subprocess.Popen(["sleep", "120"], start_new_session=True)
with open("/proc/%d/stat" % helper.pid) as f:
    start = f.read().rsplit(")", 1)[1].split()[19]
with open(sys.argv[1], "a") as f:
    f.write("%d %s\n" % (helper.pid, start))
print("time_ms=1.0", flush=True)
os._exit(0)
