"""A correctness check for the engine's lit tests (issue 21): runs the
stand-in program (Inputs/standin) and prints what a numerical program would
print as its result. The stand-in reports the registers of its own cubin;
a build capped at 40 registers or fewer (--maxrregcount=32) prints a result
that has drifted by 3e-5 relative, as a fast-math build might.

usage: check_output.py [--file F] <program> [args...]
  (with --file, the result is written to F instead of stdout)"""
import re
import subprocess
import sys

args = sys.argv[1:]
path = None
if args[0] == "--file":
    path, args = args[1], args[2:]
out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
regs = int(re.search(r"registers (\d+)", out).group(1))
drift = 3e-5 if regs <= 40 else 0.0
text = "checksum = %.9e\nrows = 4096\nmax_error = %.3e\n" % (1234.5 * (1 + drift), 1e-7)
if path:
    open(path, "w").write(text)
else:
    sys.stdout.write(text)
