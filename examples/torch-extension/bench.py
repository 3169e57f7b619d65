"""Times the extension's kernel with CUDA events and checks it against PyTorch.

Prints time_ms=<median of 20 timed launches>; exits 1 when the result differs
from the reference (computed with torch on the GPU) or no GPU is present.
"""
import sys

import torch
import ciq_torch_ext as ext

N, STEPS = 1 << 22, 96


def reference(x):
    v = x.clone()
    for _ in range(STEPS):
        v = v * 0.999 + 0.001 * torch.sin(v + 0.5 * torch.cos(v))
    return v


def main():
    if not torch.cuda.is_available():
        print("bench.py: no CUDA device", file=sys.stderr)
        return 1
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.rand(N, device="cuda", generator=g) * 4 - 2
    y = torch.empty_like(x)
    if ext.run(x.data_ptr(), y.data_ptr(), N, STEPS) != 0:
        print("bench.py: the launch failed", file=sys.stderr)
        return 1
    torch.cuda.synchronize()
    if not torch.allclose(y, reference(x), rtol=1e-3, atol=1e-3):
        print("bench.py: wrong result, max error %g" % (y - reference(x)).abs().max().item(), file=sys.stderr)
        return 1
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        ext.run(x.data_ptr(), y.data_ptr(), N, STEPS)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    print("ITEMS=%d FAST_SINCOS=%d time_ms=%.4f" % (ext.items(), ext.fast_sincos(), times[len(times) // 2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
