"""A stand-in for a framework that compiles its kernels while it runs, as
Triton does: it asks ptxas for its version (the cache key), runs ptxas
($TRITON_PTXAS_PATH, else `ptxas` on PATH) with -v on a PTX file the first
time, keeps the cubin and ptxas's report in a cache ($TRITON_CACHE_DIR, else
~/.triton/cache), and prints time_ms= from the registers it got.

--own-cache DIR is the bypass the engine must catch: a cache of the
program's own, keyed on the PTX alone, which serves the first compile to
every later candidate."""
import hashlib
import os
import re
import subprocess
import sys


def main():
    args = sys.argv[1:]
    own_cache = None
    if args[:1] == ["--own-cache"]:
        own_cache, args = args[1], args[2:]
    ptx = args[0]
    ptxas = os.environ.get("TRITON_PTXAS_PATH") or "ptxas"
    source = open(ptx, "rb").read()
    if own_cache:
        cache, key = own_cache, hashlib.sha256(source).hexdigest()
    else:
        version = subprocess.run([ptxas, "--version"], check=True, capture_output=True).stdout
        cache = os.environ.get("TRITON_CACHE_DIR") or os.path.expanduser("~/.triton/cache")
        key = hashlib.sha256(version + source).hexdigest()
    entry = os.path.join(cache, key)
    report = os.path.join(entry, "ptxas.log")
    if not os.path.exists(report):
        os.makedirs(entry, exist_ok=True)
        cubin = os.path.join(entry, "kernels.cubin")
        run = subprocess.run([ptxas, "-v", "--gpu-name=sm_90a", ptx, "-o", cubin],
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            return 1
        with open(report, "w") as f:
            f.write(run.stderr)
    registers = sum(int(n) for n in re.findall(r"Used (\d+) registers", open(report).read()))
    # More registers "run faster" here, so that a candidate (--opt-level=0) wins.
    print("time_ms=%.3f" % (2.0 - registers / 100.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
