"""Runs a benchmark command, except on run number argv[2] (counted in the
file argv[1] over every run of every build), where it prints argv[3]
instead ("" for nothing) and exits 0: a benchmark that fails to report
only now and then.

usage: flaky_at_run.py <counter file> <N> <output> <command...>
"""
import subprocess
import sys

counter, n, output, command = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
with open(counter, "a") as f:
    f.write("run\n")
if sum(1 for _ in open(counter)) == n:
    print(output)
    sys.exit(0)
sys.exit(subprocess.run(command).returncode)
