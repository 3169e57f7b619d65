"""A real Triton compile with no GPU: triton.compile for an explicit target
(sm_90, as on an H100/H200), which runs ptxas through TRITON_PTXAS_PATH as
every @triton.jit launch does. Prints the kernel's registers as the metric."""
import os
import warnings

warnings.simplefilter("ignore")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # silences Triton 3.9's notice

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=mask)


src = ASTSource(fn=softmax_kernel, signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32"},
                constexprs={"BLOCK": 1024})
kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32))
print("cubin_bytes=%d" % len(kernel.asm["cubin"]))
print("time_ms=1.0")
