#!/usr/bin/env bash
# Issue 43 on a GPU: a PyTorch CUDA extension (examples/torch-extension)
# tuned through its setup.py build with no setting of PyTorch's, locked,
# rebuilt with the lock (`ciq lock env`), proved by `ciq lock verify
# --object` on the module's .so, and validated.
#
#   bench/torch_extension_gpu.sh <ciq prefix> <out dir>
#
# Needs python3 with a CUDA build of PyTorch, nvcc (PATH or /usr/local/cuda),
# a GPU. Where the time goes: every build runs setup.py (import torch, nvcc,
# the link: 2.5-4 s on a 2-core host, a ptxas-only candidate less through
# PTX reuse) and every run of bench.py imports torch and starts CUDA (about
# 5 s on an H100 host). Measured there (2026-12-05, the example's 2-point
# space): the tune 173 s, the lock build, verify and run 16 s, `ciq
# validate` (2 builds, 10 runs of each attribution row) 141 s. The whole
# script stays within CIQ_TORCH_DEADLINE_S
# seconds (default 420): each step's timeout is what is left of it less
# what the later steps need, so a slow step cuts itself short instead of
# the steps after it; validate, last, gets what is left. Every step's exit
# status and seconds go to <out dir>/summary.txt (and stdout), its output to
# <out dir>/<step>.log; the tune's results.csv, journal and small logs to
# <out dir>/run/, the lock to <out dir>/ciq.lock. The work tree (a copy of
# the example) is a temporary folder, named on the last line.
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq prefix> <out dir>" >&2; exit 2; }
prefix=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -x /usr/local/cuda/bin/nvcc ] && case ":$PATH:" in *:/usr/local/cuda/bin:*) ;; *) export PATH="/usr/local/cuda/bin:$PATH" ;; esac
export PATH="$prefix/bin:$PATH"
ciq="$prefix/bin/ciq"
deadline=${CIQ_TORCH_DEADLINE_S:-420}
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
now() { echo $(( $(date +%s) - start )); }

# step NAME CAP RESERVE COMMAND...: runs COMMAND (output to <out>/NAME.log)
# with a timeout of CAP seconds, or less: what is left of the deadline after
# RESERVE seconds kept for the later steps. Prints one line: exit status,
# seconds, limit, and the time so far. Returns the command's exit status.
step() {
  local name=$1 cap=$2 reserve=$3
  shift 3
  local limit=$(( deadline - $(now) - reserve ))
  (( limit > cap )) && limit=$cap
  if (( limit < 5 )); then
    say "$(printf '%-13s skipped: %d s of the %d s deadline left, %d kept for the later steps' \
      "$name" $(( deadline - $(now) )) "$deadline" "$reserve")"
    return 124
  fi
  local t0 rc
  t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  say "$(printf '%-13s exit %3d  %4d s (limit %3d s)  at %4d s' "$name" "$rc" $(( $(date +%s) - t0 )) "$limit" "$(now)")"
  return $rc
}

# The tune's run directory: results, journal, the small logs; and the lock.
keep_run() {
  mkdir -p "$out/run/logs"
  cp ciq/workload/results.csv ciq/workload/journal.jsonl ciq/workload/kernel-times.csv "$out/run/" 2>/dev/null
  [ -d ciq/workload/logs ] && find ciq/workload/logs -maxdepth 1 -type f -size -256k -exec cp {} "$out/run/logs/" \;
  [ -f ciq.lock ] && cp ciq.lock "$out/"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/ciq-torch-extension.XXXXXX") || exit 1
src="$work/src"
cp -r "$here/examples/torch-extension" "$src" && rm -rf "$src/ciq.lock" "$src/ciq" "$src/build"
cd "$src" || exit 1
say "torch-extension on $(hostname), deadline $deadline s"
step host 30 0 sh -c 'nvidia-smi -L; echo "cores: $(nproc)"; python3 -c "import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda)"
  nvcc --version | tail -2; "$1" --version' host "$ciq"
sed 's/^/  /' "$out/host.log" 2>/dev/null | tee -a "$summary"

# The extension and its benchmark outside ciq: they must build and pass.
step plain-build 60 0 python3 setup.py build_ext --inplace || { say "plain build failed: $out/plain-build.log"; exit 1; }
step plain-bench 60 0 python3 bench.py || { say "bench.py failed: $out/plain-bench.log"; exit 1; }
say "  plain: $(tail -1 "$out/plain-bench.log")"
rm -rf build ciq_torch_ext*.so
step doctor 30 0 "$ciq" doctor --config ciq.yaml
grep -E "pytorch" "$out/doctor.log" 2>/dev/null | sed 's/^/  /' | tee -a "$summary"

# The tune keeps 50 s for the locked build, its proof and its bench (about
# 10 s on the H200); validate gets what is left after them.
step tune 330 50 "$ciq" tune --config ciq.yaml
grep -E "^\[|^finalists|^minimization|^verdict|^winning options|^attribution|^  (baseline|parameters|compiler|both)|^lockfile|error" \
  "$out/tune.log" 2>/dev/null | sed 's/^/  /' | tee -a "$summary"
keep_run
[ -f ciq.lock ] || { say "no lock written: nothing to rebuild, verify or validate (at $(now) s; work tree $src)"; exit 1; }

# A later build with the lock, as a user's would be, then its proof.
rm -rf build ciq_torch_ext*.so
step locked-build 60 25 sh -c 'eval "$("$1" lock env ciq.lock)" && env | grep -E "^(PYTORCH_NVCC|CUDA_HOME|CIQ_LOCK)=" &&
  python3 setup.py build_ext --inplace' locked-build "$ciq"
step verify 15 20 sh -c '"$1" lock verify ciq.lock --object ciq_torch_ext*.so' verify "$ciq"
sed 's/^/  /' "$out/verify.log" 2>/dev/null | tee -a "$summary"
step locked-bench 40 0 python3 bench.py
say "  locked: $(tail -1 "$out/locked-bench.log" 2>/dev/null)"

# The winner against the default compile: 10 runs of each attribution row.
step validate 200 0 "$ciq" validate --config ciq.yaml --warmup 0 --runs 10
grep -E "median|speedup|verdict" "$out/validate.log" 2>/dev/null | sed 's/^/  /' | tee -a "$summary"
keep_run
say "wall time: $(now) s (work tree $src)"
