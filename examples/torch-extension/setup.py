# The extension as PyTorch users build it: torch.utils.cpp_extension's
# CUDAExtension and BuildExtension (`python3 setup.py build_ext --inplace`,
# or `pip install .`). PyTorch runs nvcc by a path (PYTORCH_NVCC, else
# $CUDA_HOME/bin/nvcc): ciq points both at its stand-in during a tune, and
# `ciq lock env` does for a build with the lock.
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

arch = os.environ.get("ARCH", "sm_90")   # the H200's; no GPU is needed to build
setup(
    name="ciq_torch_ext",
    ext_modules=[CUDAExtension("ciq_torch_ext", ["poly_ext.cu"],
                               extra_compile_args={"cxx": [], "nvcc": ["-O3", "-arch=" + arch]})],
    cmdclass={"build_ext": BuildExtension},
)
