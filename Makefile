# The two entry points of the README. Both install what is missing, configure
# and build; `demo` installs and builds only the tool (ciq, ciq-ptxas and what
# they run) and then tunes examples/spill, `check` installs every test
# dependency, builds everything and runs every test through CTest.
BUILD ?= build
JOBS  ?= $(shell nproc)
# What ciq needs to build and run (the demo included): the compilers and the
# libraries it links (top CMakeLists.txt, common/, engine/measure/),
# python3-pip for CUPTI below. llvm-14-tools comes
# with llvm-14-dev anyway (a dependency of the Debian package). zlib1g-dev:
# LLVM 14's CMake package links LLVMSupport to ZLIB::ZLIB, and no package
# above depends on it (only recommends do, which apt is told to skip), so
# without it the configure of a fresh Debian 12 stops at find_package(LLVM).
TOOL_DEBS := cmake ninja-build g++ make llvm-14-dev llvm-14-tools nlohmann-json3-dev \
         libyaml-cpp-dev libmuparser-dev libssl-dev libcurl4-openssl-dev libarchive-dev \
         libboost-math-dev python3 python3-pip libcsv-dev libzstd-dev liblz4-dev \
         zlib1g-dev
# What `ciq report` runs, not the build or the demo: gnuplot draws its plots
# (without it the report stops with one line saying to install gnuplot-nox).
# It pulls 50 packages (cairo, pango, fonts, X and AV1/HEIF image libraries),
# a third of what `make demo` would install on a fresh Debian 12, so `make
# check` installs it (the report's tests) and `make demo` does not.
REPORT_DEBS := gnuplot-nox
# What only the tests use: GoogleTest, the compiler caches and clang the lit
# tests drive, python3-yaml of lit's helpers, Chromium (the report's HTML
# check), Slurm and munge (the worker tests).
TEST_DEBS := libgtest-dev ccache sccache python3-yaml chromium clang \
         slurmctld slurmd slurm-client munge
# Python packages the tests use, from the Python package index (pip):
# triton for tests/lit/engine/triton.test (a real Triton compile, no GPU needed);
# torch for tests/lit/torch/extension.test (a real CUDAExtension build, no GPU
# needed: PyPI's Linux wheel is a CUDA build; 1.5 min, 4 GB with its nvidia-*
# wheels; it pulls another CUPTI, which PIP_DISTS puts back below).
PIPS  := triton torch
# Python distributions whose files the build uses, checked by distribution
# name and version: NVIDIA's CUPTI (headers and libcupti of libciq-kernel-trace, the
# kernel_time metric), of the toolkit's release, where the toolkit has no
# extras/CUPTI (cmake/FindCUPTI.cmake finds either).
PIP_DISTS := nvidia-cuda-cupti==13.0.*
# Python packages of the benchmarks only (bench/search_efficiency.py's peers),
# not of the build or the tests.
BENCH_PIP := kernel_tuner optuna
.PHONY: deps deps-tool configure configure-tool build build-tool demo check clean bench-deps

# Two `make check` at once (or beside another apt) must both install:
# apt-get install waits for dpkg's lock (DPkg::Lock::Timeout), apt-get update
# does not wait for the lists' lock, so it is tried again while that lock is
# why it failed (10 min at most); a pip install that failed is forgiven when
# the package imports after all (the other run installed it).
# Installs the Debian packages named in $(1) that are missing.
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "ciq: installing $$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); n=0; \
	  until err=$$($$SUDO apt-get update -qq 2>&1); do \
	    case "$$err" in *"Could not get lock"*|*"Unable to lock"*) \
	      n=$$((n + 1)); if [ $$n -lt 120 ]; then sleep 5; continue; fi;; esac; \
	    echo "$$err" >&2; exit 1; \
	  done; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=900 \
	    --no-install-recommends $$missing; \
	fi
endef

# The tool's dependencies: its Debian packages and CUPTI.
deps-tool:
	$(call apt_install,$(TOOL_DEBS))
	@for p in $(PIP_DISTS); do d=$${p%%=*}; \
	  python3 -c "import importlib.metadata as m, sys; from pip._vendor.packaging.requirements import Requirement; \
	    r = Requirement(sys.argv[1]); sys.exit(m.version(r.name) not in r.specifier)" "$$p" 2>/dev/null || { \
	  echo "ciq: installing $$p (pip)"; \
	  python3 -m pip install -q "$$p" 2>/dev/null || python3 -m pip install -q --user --break-system-packages "$$p" || \
	  python3 -c "import importlib.metadata as m, sys; m.version(sys.argv[1])" $$d 2>/dev/null || \
	  echo "ciq: could not install $$p; ciq is built without kernel times (kernel_time_ms)"; }; done

# Every dependency: the tool's and the tests'. torch pulls its own CUPTI, so
# deps-tool runs again after it to put the toolkit's release back.
deps: deps-tool
	$(call apt_install,$(REPORT_DEBS) $(TEST_DEBS))
	@for p in $(PIPS); do python3 -c "import $$p" 2>/dev/null || { echo "ciq: installing $$p (pip)"; \
	  python3 -m pip install -q $$p 2>/dev/null || python3 -m pip install -q --user --break-system-packages $$p || \
	  python3 -c "import $$p" 2>/dev/null || \
	  echo "ciq: could not install $$p; the tests that need it are skipped (lit REQUIRES)"; }; done
	@$(MAKE) --no-print-directory deps-tool

# The tool alone: a build folder configured without the tests (GoogleTest and
# lit are test dependencies); one `make check` configured keeps its tests.
configure-tool: deps-tool
	@[ -f $(BUILD)/build.ninja ] || cmake -S . -B $(BUILD) -G Ninja -DBUILD_TESTING=OFF

# Everything: turns the tests on in a folder `make demo` configured.
configure: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake -S . -B $(BUILD) -G Ninja -DBUILD_TESTING=ON; \
	elif grep -q '^BUILD_TESTING:BOOL=OFF' $(BUILD)/CMakeCache.txt; then cmake $(BUILD) -DBUILD_TESTING=ON; fi

# ciq-tools (top CMakeLists.txt): ciq, ciq-ptxas and what they run; the
# CMake package (lib/cmake/CompileIQ) is written at configure.
build-tool: configure-tool
	cmake --build $(BUILD) --target ciq-tools -j $(JOBS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The demo: examples/spill, an ordinary CMake CUDA project whose only ciq
# lines are the module's, tuned for fewer spill bytes (compile-only: no GPU),
# with per-kernel controls on: it ends with the per-kernel winner and the
# attribution of the gain to options and to per-kernel directives.
# nvcc: the one on PATH, else the toolkit's standard prefix (CUDA's installers
# do not put /usr/local/cuda/bin on PATH: a fresh machine's demo stopped at
# "No CMAKE_CUDA_COMPILER could be found").
NVCC ?= $(or $(shell command -v nvcc),/usr/local/cuda/bin/nvcc)
demo: build-tool
	cmake -S examples/spill -B $(BUILD)/demo -G Ninja -DCompileIQ_DIR=$(CURDIR)/$(BUILD)/lib/cmake/CompileIQ \
	  -DCMAKE_CUDA_COMPILER=$(NVCC) -DSPILL_KERNEL_CONTROLS=on
	cmake --build $(BUILD)/demo --target ciq-tune-spill_bench

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench-deps:
	python3 -m pip install --quiet $(BENCH_PIP)

clean:
	rm -rf $(BUILD)
