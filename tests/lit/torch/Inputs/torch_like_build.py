"""Builds one CUDA object the two ways torch.utils.cpp_extension runs nvcc,
without PyTorch: `cuda_home` runs $CUDA_HOME/bin/nvcc by its full path (its
builds without ninja), `pytorch_nvcc` runs $PYTORCH_NVCC (a shell word list:
its ninja builds and JIT loads), each with -MD as PyTorch passes it.

  torch_like_build.py cuda_home|pytorch_nvcc SOURCE OUTPUT [nvcc args...]
"""
import os
import shlex
import subprocess
import sys

how, source, output = sys.argv[1:4]
if how == "cuda_home":
    nvcc = [os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc")]
else:
    nvcc = shlex.split(os.environ["PYTORCH_NVCC"])
sys.exit(subprocess.call(nvcc + ["-MD", "-MF", output + ".d", "-c", source, "-o", output] + sys.argv[4:]))
