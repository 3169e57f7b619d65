# lit configuration shared by every suite under tests/lit/. Tests run against
# the real nvcc and ptxas of this machine; there is no fake compiler.
import os
import lit.formats

site = lit_config.params.get("ciq_site_config")
if site:
    lit_config.load_config(config, site)

config.name = "ciq"
# Each test its own GPU lock folder: tests of one lit run share its TMPDIR,
# and a search waiting for another test's search (on the host lock, there is
# no GPU here) prints "waiting for GPU host" into output a test checks line by
# line. A test may still name its own folder (env CIQ_GPU_LOCK_DIR=...).
config.test_format = lit.formats.ShTest(
    execute_external=True, preamble_commands=["export CIQ_GPU_LOCK_DIR=%t.gpu-locks"])
config.suffixes = [".test", ".sh"]
config.excludes = ["Inputs", "inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ciq_build_dir, "tests", "lit-out")

bin_dir = config.ciq_bin_dir
cuda_bin = os.path.dirname(config.nvcc)
config.environment["PATH"] = os.pathsep.join(
    [bin_dir, config.llvm_tools_dir, cuda_bin, os.environ.get("PATH", "")])
for var in ["HOME", "TMPDIR", "XDG_CACHE_HOME", "CUDA_PATH", "LANG"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Fixtures import tests/lit/lock_hash.py: no bytecode written into the source tree.
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
# Nothing of a developer's own ciq setup may leak into a test.
for var in ["CIQ_SOCKET", "CIQ_LOCK", "CIQ_REAL_PTXAS", "CIQ_REAL_NVCC",
            "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "CIQ_SEARCH_SPACES_DIR"]:
    config.environment.pop(var, None)

config.substitutions.append(("%ciq-ptxas", os.path.join(bin_dir, "ciq-ptxas")))
config.substitutions.append(("%ciq-run-fixture", os.path.join(bin_dir, "ciq-run-fixture")))
config.substitutions.append(("%lock_section", config.python + " " + os.path.join(config.ciq_source_dir, "tests", "lit", "lock_section.py")))
config.substitutions.append(("%ciq", os.path.join(bin_dir, "ciq")))
config.substitutions.append(("%FileCheck", config.filecheck))
config.substitutions.append(("%nvcc", config.nvcc))
# The toolkit root (FindCUDA's CUDA_TOOLKIT_ROOT_DIR): bin/nvcc's grandparent, links resolved.
config.substitutions.append(("%cuda_root", os.path.dirname(os.path.dirname(os.path.realpath(config.nvcc)))))
config.substitutions.append(("%ptxas", config.ptxas))
config.substitutions.append(("%cmake", config.cmake))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%src_root", config.ciq_source_dir))
config.substitutions.append(("%build_root", config.ciq_build_dir))
config.substitutions.append(("%examples", os.path.join(config.ciq_source_dir, "examples")))
config.substitutions.append(("%module_dir", os.path.join(config.ciq_build_dir, "lib", "cmake", "CompileIQ")))

# Tests that mount their own small file systems (a full, read-only or
# immutable disk under a search, bench/disk_faults.py) need root; the
# read-only and immutable ones a loop-mounted ext4 as well.
import shutil

# A clang host compiler (CMAKE_CUDA_HOST_COMPILER=clang++): `make deps` installs Debian's clang.
if shutil.which("clang++"):
    config.available_features.add("clang")

# Headless Chromium opens `ciq report`'s page (analysis/report.test,
# e2e/demo-report.test): `make deps` installs Debian's chromium.
if shutil.which("chromium") or shutil.which("chromium-browser"):
    config.available_features.add("chromium")

if os.geteuid() == 0:
    config.available_features.add("root")
    if shutil.which("mkfs.ext4") and shutil.which("e2fsck") and shutil.which("chattr") and \
            os.path.exists("/dev/loop-control"):
        config.available_features.add("loop-ext4")
