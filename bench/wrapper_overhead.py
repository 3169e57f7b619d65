#!/usr/bin/env python3
"""bench/wrapper_overhead: what ciq-ptxas adds to a compile (a benchmark, not a test).

For `ptxas` (a small PTX file) and `nvcc -c` (a small .cu), in one run:
  baseline      the compiler alone
  pass-through  ciq-ptxas <compiler> ...            (no tuning run, no lock); for ptxas
                also the stand-in (a link named ptxas, CIQ_REAL_PTXAS set)
  tuning-run    ciq-ptxas <compiler> ... under a fake engine (hello/candidate/receipt
                over a Unix socket, statistics, device-code hash), with an empty candidate
                so that the compile itself is the same work
  lock          ciq-ptxas --lock ciq.lock <compiler> ... (an empty winner; version probe cached)
Runs are interleaved (baseline, mode, baseline, mode, ...) so that machine noise hits
both alike. Prints the medians, the added milliseconds (difference of the medians),
`paired` (median of the differences within each baseline/mode pair, which slow drift
of the machine does not move) with its 95% confidence interval (distribution-free, from
the order statistics of the pair differences: a figure whose interval holds 0 is within
the machine's noise) and the ratio of the medians.

  bench/wrapper_overhead.py --ciq-ptxas build/bin/ciq-ptxas [--repeats N (default 15; docs use 31)]
                            [--tools ptxas|nvcc|ptxas,nvcc (default both)]
"""
import argparse
import hashlib
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

EMPTY = {"candidate_id": "bench", "candidate_hash": "0" * 64, "ptxas_options": [],
         "nvcc_options": [], "defines": [], "acfs": [], "compile_timeout_s": 0}


class FakeEngine:
    """Serves EMPTY to every hello and acks every receipt, one connection at a time
    (the bench compiles one file at a time), with the replies encoded once: the
    engine's own cost is not the wrapper's."""

    CANDIDATE = (json.dumps(dict(EMPTY, v=1, op="candidate")) + "\n").encode()
    ACK = b'{"v":1,"op":"ack"}\n'

    def __init__(self, path):
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(64)
        threading.Thread(target=self.loop, daemon=True).start()

    @staticmethod
    def read_line(conn):
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                return False
            data += chunk
        return True

    def loop(self):
        while True:
            conn, _ = self.srv.accept()
            with conn:
                if self.read_line(conn):
                    conn.sendall(self.CANDIDATE)
                    if self.read_line(conn):
                        conn.sendall(self.ACK)


def timed(cmd, env):
    t = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000.0


def median_ci(diffs, level=0.95):
    """Distribution-free confidence interval of the median: the k-th smallest and
    k-th largest difference, k the largest rank with P(Binomial(n, 1/2) < k) <= (1-level)/2."""
    d, n = sorted(diffs), len(diffs)
    tail, k, cum = (1 - level) / 2, 0, 0.0
    while k < n:
        cum += math.comb(n, k) / 2 ** n
        if cum > tail:
            break
        k += 1
    if k == 0:
        return float("-inf"), float("inf")
    return d[k - 1], d[n - k]


def measure(name, base_cmd, wrapped_cmd, env_base, env_wrapped, repeats):
    timed(base_cmd, env_base), timed(wrapped_cmd, env_wrapped)  # warm caches
    base, wrapped = [], []
    for _ in range(repeats):
        base.append(timed(base_cmd, env_base))
        wrapped.append(timed(wrapped_cmd, env_wrapped))
    mb, mw = statistics.median(base), statistics.median(wrapped)
    diffs = [w - b for b, w in zip(base, wrapped)]
    paired = statistics.median(diffs)
    lo, hi = median_ci(diffs)
    ci = f"[{lo:+.2f}, {hi:+.2f}]"
    print(f"{name:<28} {mb:10.2f} {mw:10.2f} {mw - mb:+10.2f} {paired:+10.2f} {ci:>18} {mw / mb:8.3f}")
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ciq-ptxas", required=True)
    p.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--tools", default="ptxas,nvcc", help="which compilers to time: ptxas, nvcc or both")
    a = p.parse_args()
    wrap = os.path.abspath(a.ciq_ptxas)
    nvcc = a.nvcc
    ptxas = os.path.join(os.path.dirname(os.path.realpath(nvcc)), "ptxas")
    work = tempfile.mkdtemp(prefix="ciq-bench-")
    cu = os.path.join(work, "k.cu")
    with open(cu, "w") as f:
        f.write("__global__ void axpy(float a, const float *x, float *y) {"
                " int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = a * x[i] + y[i]; }\n")
    ptx = os.path.join(work, "k.ptx")
    subprocess.run([nvcc, "-ptx", "-arch=sm_90", cu, "-o", ptx], check=True)
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    version = version.strip().split(", V")[-1].split()[0]
    lock = os.path.join(work, "ciq.lock")
    with open(lock, "w") as f:
        json.dump({"schema_version": 1, "target": "bench", "architectures": ["sm_90"],
                   "compiler": {"nvcc": {"path": nvcc, "version": version},
                                "ptxas": {"path": ptxas, "version": version}},
                   "winner": {"candidate_id": "bench", "device_code_sha256": "",
                              # candidate_hash of an empty winner (common/Lockfile.h)
                              "candidate_hash": hashlib.sha256(
                                  b'{"acfs":[],"defines":[],"nvcc":[],"ptxas":[]}').hexdigest(),
                              "rendered": {"ptxas": [], "nvcc": [], "defines": []}, "acfs": []}}, f)
    sock = os.path.join(work, "engine.sock")
    FakeEngine(sock)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIQ_")}
    env["XDG_CACHE_HOME"] = os.path.join(work, "cache")
    env_tune = dict(env, CIQ_SOCKET=sock)

    ptxas_cmd = [ptxas, "-arch=sm_90", ptx, "-o", os.path.join(work, "k.cubin")]
    nvcc_cmd = [nvcc, "-c", "-arch=sm_90", cu, "-o", os.path.join(work, "k.o")]
    print(f"ciq-ptxas overhead, median of {a.repeats} interleaved runs (ms)")
    print(f"{'mode':<28} {'compiler':>10} {'wrapped':>10} {'added':>10} {'paired':>10} {'paired 95% CI':>18} "
          f"{'ratio':>8}")
    standin = os.path.join(work, "standin", "ptxas")  # as TRITON_PTXAS_PATH would name it
    os.makedirs(os.path.dirname(standin))
    os.symlink(wrap, standin)
    env_standin = dict(env, CIQ_REAL_PTXAS=ptxas)
    tools = set(a.tools.split(","))
    if not tools <= {"ptxas", "nvcc"}:
        sys.exit(f"wrapper_overhead: --tools {a.tools}: name ptxas, nvcc or both (comma-separated)")
    for tool, cmd in (("ptxas", ptxas_cmd), ("nvcc -c", nvcc_cmd)):
        if tool.split()[0] not in tools:
            continue
        measure(f"{tool}: pass-through", cmd, [wrap] + cmd, env, env, a.repeats)
        if tool == "ptxas":
            measure("ptxas stand-in: pass-through", cmd, [standin] + cmd[1:], env, env_standin, a.repeats)
        measure(f"{tool}: tuning-run", cmd, [wrap] + cmd, env, env_tune, a.repeats)
        measure(f"{tool}: lock", cmd, [wrap, "--lock", lock] + cmd, env, env, a.repeats)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
