"""Runs a benchmark command and, on run number argv[2] (counted in the file
argv[1] over every run of every build), first runs `<ciq> stop --config
<config>` (argv[3], argv[4]) as a user would from another shell, keeping
its answer in stop.txt. N = 0 never stops.

usage: stop_at_run.py <counter file> <N> <ciq> <config> <command...>
"""
import subprocess
import sys

counter, n, ciq, config, command = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
with open(counter, "a") as f:
    f.write("run\n")
if sum(1 for _ in open(counter)) == n:
    r = subprocess.run([ciq, "stop", "--config", config], capture_output=True, text=True)
    open("stop.txt", "w").write(r.stdout + r.stderr)
sys.exit(subprocess.run(command).returncode)
