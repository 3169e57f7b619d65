#!/usr/bin/env bash
# Issue 48 on a GPU: ciq's runtime examples tuned over the default space
# (per-kernel controls included, kernel_controls: auto), the winner rehearsed
# before its lock is written (the tune's summary says so), validated (ciq
# validate rehearses the lock again and measures the rehearsed program),
# then the project rebuilt with the lock and `ciq lock verify --build-dir`
# run on it: the lock builds and verifies on the first try.
#
#   bench/rehearsal_gpu.sh <ciq relocatable tarball or prefix> <out dir> [example...]
#
# Runs examples/gpu/run-all.sh (default examples: reduce gemm stencil) with
# CIQ_MAX_EVALUATIONS (default 8) and TUNE_TIMEOUT_S (default 150) so that a
# 30-minute device session holds it; every step's log and exit status are
# written as it goes (<out dir>/results/summary.tsv), then each tune's
# rehearsal line and the verify line are collected into <out dir>/rehearsal.txt.
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq tarball or prefix> <out dir> [example...]" >&2; exit 2; }
src=$1; mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2; shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -f "$src" ]; then   # a tarball: unpack outside the repository
  mkdir -p /tmp/ciq-prefix && tar -C /tmp/ciq-prefix -xzf "$src" || exit 2
  prefix=$(ls -d /tmp/ciq-prefix/ciq-* | head -1)
else
  prefix=$(cd "$src" && pwd) || exit 2
fi
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
export CIQ_MAX_EVALUATIONS=${CIQ_MAX_EVALUATIONS:-8} TUNE_TIMEOUT_S=${TUNE_TIMEOUT_S:-150}
examples=("$@"); [ ${#examples[@]} -gt 0 ] || examples=(reduce gemm stencil)
"$here/examples/gpu/run-all.sh" "$prefix" "$out/results" "${examples[@]}" > "$out/run-all.log" 2>&1
rc=$?
{
  echo "run-all exit $rc (CIQ_MAX_EVALUATIONS=$CIQ_MAX_EVALUATIONS)"
  for ex in "${examples[@]}"; do
    echo "== $ex"
    grep -h -E '^(rehearsal:|verdict:|winning options:|phases:)' "$out/results/$ex/tune.log" 2>/dev/null
    grep -h -E 'rehearsal|speedup|verdict' "$out/results/$ex/validate.log" 2>/dev/null
    grep -h -E 'device code|error' "$out/results/$ex/verify-locked.log" 2>/dev/null
  done
  cat "$out/results/summary.tsv" 2>/dev/null
} > "$out/rehearsal.txt"
cat "$out/rehearsal.txt"
exit $rc
