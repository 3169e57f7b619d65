#!/usr/bin/env python3
"""Do compiles beside a measurement change it? A/A runs with and without.

    bench/overlap_aa.py <results dir> <kernel .cu> <runs> -- <benchmark command ...>

Runs the benchmark <runs> times in each of three conditions, interleaved
(quiet, busy-nice, busy; then again) so that drift hits all three alike:

  quiet       nothing else runs
  busy-nice   K candidate compiles run beside it at nice +10 (ciq's default,
              `overlap: low_priority`), K = a quarter of the cores
  busy        the same compiles at the benchmark's own priority

A "compile" is `nvcc -arch=sm_90 -O3 -c <kernel .cu>` (cicc and ptxas, the
work of a candidate build), in a loop while the benchmark runs. Each run's time is the `time_ms=` (or `time_ms:`) its output
prints. Prints per condition: runs, median, CV, and the median's shift from
quiet with a two-sided Mann-Whitney p-value; the verdict is the shift
against quiet's own noise. Needs no GPU of its own (the benchmark does).
"""
import os
import re
import statistics
import subprocess
import sys
import time


def one(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    m = re.search(r"time_ms\s*[=:]\s*([0-9.eE+-]+)", out)
    if not m:
        sys.exit("overlap_aa: no time_ms in the benchmark's output:\n" + out[-500:])
    return float(m.group(1))


def compiles(cu, k, nice):
    procs = []
    for i in range(k):
        loop = "while true; do nvcc -arch=sm_90 -O3 -c %s -o /tmp/overlap-aa-%d.o >/dev/null 2>&1; done" % (cu, i)
        procs.append(subprocess.Popen(["nice", "-n", str(nice), "bash", "-c", loop], start_new_session=True))
    time.sleep(2)   # the compiles are under way
    return procs


def stop(procs):
    for p in procs:
        try:
            os.killpg(p.pid, 9)
        except ProcessLookupError:
            pass
        p.wait()


def mann_whitney_p(a, b):
    try:
        from scipy.stats import mannwhitneyu
        return mannwhitneyu(a, b, alternative="two-sided").pvalue
    except ImportError:
        return float("nan")


def main():
    if "--" not in sys.argv or len(sys.argv) < 5:
        sys.exit(__doc__)
    i = sys.argv.index("--")
    results, cu, runs = sys.argv[1], os.path.abspath(sys.argv[2]), int(sys.argv[3])
    cmd = sys.argv[i + 1:]
    os.makedirs(results, exist_ok=True)
    k = max(1, min(4, (os.cpu_count() or 4) // 4))
    t = {"quiet": [], "busy-nice": [], "busy": []}
    one(cmd)   # warm-up: loads, first-touch
    for r in range(runs):
        for cond in ("quiet", "busy-nice", "busy"):
            procs = [] if cond == "quiet" else compiles(cu, k, 10 if cond == "busy-nice" else 0)
            try:
                t[cond].append(one(cmd))
            finally:
                stop(procs)
    with open(os.path.join(results, "overlap-aa.tsv"), "w") as f:
        f.write("condition\trun\ttime_ms\n")
        for cond, v in t.items():
            for n, x in enumerate(v):
                f.write("%s\t%d\t%.6f\n" % (cond, n, x))
    q = statistics.median(t["quiet"])
    qcv = statistics.stdev(t["quiet"]) / statistics.mean(t["quiet"]) * 100
    print("benchmark: %s; %d runs per condition; %d compile(s) beside it" % (" ".join(cmd), runs, k))
    print("%-10s %5s %12s %7s %9s %9s" % ("condition", "runs", "median ms", "CV", "shift", "p"))
    for cond, v in t.items():
        m = statistics.median(v)
        cv = statistics.stdev(v) / statistics.mean(v) * 100
        p = mann_whitney_p(v, t["quiet"]) if cond != "quiet" else float("nan")
        print("%-10s %5d %12.4f %6.2f%% %+8.2f%% %9.3g" % (cond, len(v), m, cv, (m / q - 1) * 100, p))
    print("quiet's own noise (CV): %.2f%%" % qcv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
