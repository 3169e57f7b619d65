"""Runs a benchmark command after sleeping argv[1] seconds: a benchmark run
that costs time, for the time budget's tests (issue 49).

usage: slow_run.py <seconds> <command...>
"""
import subprocess
import sys
import time

time.sleep(float(sys.argv[1]))
sys.exit(subprocess.run(sys.argv[2:]).returncode)
