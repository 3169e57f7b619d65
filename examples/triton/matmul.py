"""A Triton fp16 matmul (fp32 accumulate), checked against PyTorch and timed
with CUDA events; prints time_ms= (the median of several timed batches), the
metric ciq.yaml parses. Its kernel compiles at run time: under `ciq tune`
Triton's ptxas is ciq's stand-in (TRITON_PTXAS_PATH) with the candidate.

    python3 matmul.py            # check, then time
    python3 matmul.py --size 4096 --batches 7
"""
import argparse
import os
import statistics
import sys

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # Triton's long-standing default, stated

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    # Grouped ordering: neighbouring programs share rows of A in L2.
    group = pid // (GROUP_M * num_n)
    first_m = group * GROUP_M
    group_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_m)
    pid_n = (pid % (GROUP_M * num_n)) // group_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,
                        num_warps=8, num_stages=3)
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=4096, help="M = N = K (elements)")
    ap.add_argument("--batches", type=int, default=7, help="timed batches; time_ms is their median")
    ap.add_argument("--iters", type=int, default=20, help="launches per timed batch")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("matmul.py: no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    n = args.size
    a = torch.randn((n, n), device="cuda", dtype=torch.float16)
    b = torch.randn((n, n), device="cuda", dtype=torch.float16)
    # Correctness: a candidate that changes the results fails here (exit 1),
    # which ciq records as wrong_answer instead of a score.
    got = matmul(a, b)
    want = torch.matmul(a, b)
    if not torch.allclose(got, want, atol=1e-1, rtol=1e-2):
        err = (got.float() - want.float()).abs().max().item()
        print("matmul.py: wrong answer, max abs error %g vs torch.matmul" % err, file=sys.stderr)
        return 1
    for _ in range(5):   # warm-up: clocks, caches
        matmul(a, b)
    torch.cuda.synchronize()
    times = []
    for _ in range(args.batches):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.iters):
            matmul(a, b)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / args.iters)
    ms = statistics.median(times)
    print("tflops=%.1f" % (2.0 * n ** 3 / ms / 1e9))
    print("time_ms=%.5f" % ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
