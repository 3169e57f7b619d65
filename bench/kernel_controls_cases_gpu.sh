#!/usr/bin/env bash
# Issue 40 on a GPU: one option set for the whole compile against per-kernel
# controls, on a program whose kernels want different budgets.
#
#   bench/kernel_controls_cases_gpu.sh <ciq prefix> <out dir> [budget]
#
# bench/multikernel (sgemm_tiled spills under __launch_bounds__(256, 3);
# node_walk is latency-bound and held to 2 blocks per SM by a rare
# register-heavy branch; poly_stream is neutral) is tuned twice for its
# run time, three cases (each launches one kernel), the default runtime
# space, <budget> distinct binaries each (default 8), seed 1:
#
#   on    KERNEL_CONTROLS on: ptxas controls + per-kernel PTX directives
#   off   KERNEL_CONTROLS off: ptxas controls only, one option set for all
#
# each tune followed by `ciq validate` (baseline and winner interleaved,
# case by case). Then both build trees are rebuilt with their locks
# (ciq_apply_lock; the default compile where a tune locked nothing) and the
# two binaries run interleaved A B B A, AB_RUNS times per case (default 6):
# the per-kernel winner against the global winner, side by side.
#
# Every step runs under `timeout`; logs and the lock of each tune land in
# <out dir>; the figures, as they come, in <out dir>/summary.txt, the
# per-case table at its end. Needs CUDA 13.0 (nvcc), cmake, python3; ninja
# if present. Environment: TUNE_ON_TIMEOUT_S (200), TUNE_OFF_TIMEOUT_S (150),
# VALIDATE_TIMEOUT_S (90), AB_RUNS (6), AB_LOCK (a file: each A/B run holds
# flock on it, e.g. ciq's GPU lock <CIQ_GPU_LOCK_DIR>/<GPU UUID>.lock, so
# that other ciq searches on the GPU never run beside a timed A/B run).
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq prefix> <out dir> [budget]" >&2; exit 2; }
prefix=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no ciq prefix at '$1'" >&2; exit 2; }
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
budget=${3:-8}
[[ "$budget" =~ ^[1-9][0-9]*$ ]] || { echo "$0: budget '$budget' is not a positive integer" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ciq="$prefix/bin/ciq"
module="$prefix/lib/cmake/CompileIQ"
if [ ! -x "$ciq" ] || [ ! -d "$module" ]; then echo "$0: $prefix has no bin/ciq and lib/cmake/CompileIQ" >&2; exit 2; fi
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
tune_on_limit=${TUNE_ON_TIMEOUT_S:-200}
tune_off_limit=${TUNE_OFF_TIMEOUT_S:-150}
validate_limit=${VALIDATE_TIMEOUT_S:-90}
ab_runs=${AB_RUNS:-6}
ab_lock=(); [ -n "${AB_LOCK:-}" ] && ab_lock=(flock "$AB_LOCK")
cases=(gemm walk poly)

summary="$out/summary.txt"
: >"$summary"
: >"$out/steps.tsv"
t0=$(date +%s)
say() { echo "$*" | tee -a "$summary"; }

# step <name> <limit s> <command...>: output to <out>/<name>.log, exit status
# and wall time to steps.tsv; returns the command's exit status.
step() {
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s)
  echo "\$ $*" >"$out/$name.log"
  timeout --kill-after=20 "$limit" "$@" >>"$out/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - start ))" >>"$out/steps.tsv"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then say "$name: timed out after $limit s ($out/$name.log)"; fi
  return $rc
}

say "kernel controls with cases: bench/multikernel, budget $budget distinct binaries per tune, $(date -u +%FT%TZ)"
{ nvidia-smi -L 2>&1 | head -2; "$ciq" --version 2>&1 | head -1; } | tee -a "$summary"

# 1. Two copies of the program, configured and built at once (host only).
for mode in on off; do
  rm -rf "${out:?}/$mode" && mkdir -p "$out/$mode" && cp -r "$here/bench/multikernel" "$out/$mode/src" &&
    rm -f "$out/$mode/src/"*.ciq.lock || exit 1
  ( step "configure-$mode" 120 cmake -S "$out/$mode/src" -B "$out/$mode/build" "${gen[@]}" \
      -DCompileIQ_DIR="$module" -DMULTIKERNEL_KERNEL_CONTROLS="$mode" -DMULTIKERNEL_BUDGET="$budget" &&
    step "build-$mode" 180 cmake --build "$out/$mode/build" --target multikernel_bench ) &
done
wait
for mode in on off; do
  [ -x "$out/$mode/build/multikernel_bench" ] || { say "configure or build of '$mode' failed: $out/configure-$mode.log, $out/build-$mode.log"; exit 1; }
done
say "configured and built both trees after $(( $(date +%s) - t0 )) s"

# 2. Each case once on the default build: a program that fails stops here.
for c in "${cases[@]}"; do
  if ! step "sanity-$c" 60 "$out/on/build/multikernel_bench" --kernels "$c"; then
    say "case $c fails on the default build: $out/sanity-$c.log"; tail -3 "$out/sanity-$c.log" | tee -a "$summary"; exit 1
  fi
  say "default build, case $c: $(grep -E '_ms=' "$out/sanity-$c.log" | tr '\n' ' ')"
done

# 3. The two tunes, each validated.
for mode in on off; do
  yaml="$out/$mode/build/ciq/multikernel_bench/ciq.yaml"
  lock="$out/$mode/src/multikernel_bench.ciq.lock"
  limit=$tune_on_limit; [ "$mode" = off ] && limit=$tune_off_limit
  step "tune-$mode" "$limit" "$ciq" tune --config "$yaml" --max-evaluations "$budget"
  rc=$?
  echo "$rc" >"$out/tune-$mode.rc"
  say "tune $mode: exit $rc after $(( $(date +%s) - t0 )) s in all ($out/tune-$mode.log)"
  grep -E "^(ciq: error|per-kernel controls|evaluations|search ended|finalists|minimization|verdict|winning options)|^attribution|^  (baseline|compiler|per-kernel|parameters|both|all|case|winner)" \
    "$out/tune-$mode.log" | sed "s/^/  [$mode] /" | tee -a "$summary"
  if [ -f "$lock" ]; then
    step "validate-$mode" "$validate_limit" "$ciq" validate --config "$yaml"
    say "validate $mode: exit $? ($out/validate-$mode.log)"
    grep -E "^  (case|aggregate|verdict)" "$out/validate-$mode.log" | sed "s/^/  [$mode] /" | tee -a "$summary"
    "$ciq" lock show "$lock" >"$out/lock-show-$mode.txt" 2>&1
  elif [ "$rc" = 0 ]; then
    say "tune $mode locked nothing: its winner is the default compile"
  else
    say "tune $mode has no result (exit $rc, no lock): the table does not judge it"
  fi
done

# 4. Both trees rebuilt with their locks, the binaries run interleaved per case.
for mode in on off; do
  lock="$out/$mode/src/multikernel_bench.ciq.lock"
  if ! step "reconfigure-$mode" 120 cmake "$out/$mode/build" ||
    ! step "build-locked-$mode" 180 cmake --build "$out/$mode/build" --target multikernel_bench --clean-first; then
    say "rebuild with the lock of '$mode' failed: $out/reconfigure-$mode.log, $out/build-locked-$mode.log"; exit 1
  fi
  if [ -f "$lock" ]; then
    step "lock-verify-$mode" 60 "$ciq" lock verify "$lock" --build-dir "$out/$mode/build"
    say "lock verify $mode: exit $? ($(tail -1 "$out/lock-verify-$mode.log"))"
  fi
  cp "$out/$mode/build/multikernel_bench" "$out/$mode/locked_bench"
done
: >"$out/ab.tsv"
ab_start=$(date +%s)
for ((i = 0; i < ab_runs; i++)); do
  for c in "${cases[@]}"; do
    if (( i % 2 == 0 )); then order="on off"; else order="off on"; fi
    for mode in $order; do
      t=$(timeout 60 "${ab_lock[@]}" "$out/$mode/locked_bench" --kernels "$c" 2>>"$out/ab-errors.log" | sed -n 's/^time_ms=//p')
      echo "$c $mode ${t:-nan}" >>"$out/ab.tsv"
    done
  done
done
say "A/B of the locked builds: $ab_runs runs per case and build, $(( $(date +%s) - ab_start )) s"

# 5. The table.
python3 - "$out" "${cases[@]}" <<'PY' | tee -a "$summary"
import json, os, statistics, sys
out, cases = sys.argv[1], sys.argv[2:]

def lock(mode):
    p = os.path.join(out, mode, "src", "multikernel_bench.ciq.lock")
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return None

def options(l):
    if not l:
        return "(no lock: the default compile)"
    r = l.get("winner", {}).get("rendered", {})
    parts = ["-Xptxas " + o for o in r.get("ptxas", [])] + r.get("nvcc", []) + ["-D" + d for d in r.get("defines", [])]
    for k in r.get("kernels", []):
        parts.append("kernel %s: .%s %s" % (k.get("label") or k.get("kernel"), k.get("directive"), k.get("value")))
    return " ".join(parts) or "(none)"

def validation(l):
    v = (l or {}).get("score", {}).get("validation", {})
    return {c["name"]: c for c in v.get("cases", [])}, v

ab = {}
if os.path.exists(os.path.join(out, "ab.tsv")):
    for line in open(os.path.join(out, "ab.tsv")):
        c, mode, t = line.split()
        if t != "nan":
            ab.setdefault((c, mode), []).append(float(t))

locks = {m: lock(m) for m in ("on", "off")}
def finished(m):  # a tune that timed out or failed is no "default compile won"
    try:
        return open(os.path.join(out, "tune-%s.rc" % m)).read().strip() == "0"
    except OSError:
        return False
failed = [m for m in ("on", "off") if not finished(m)]
print()
print("winners:")
for m, name in (("off", "global (KERNEL_CONTROLS off)"), ("on", "per-kernel (KERNEL_CONTROLS on)")):
    _, v = validation(locks[m])
    verdict = v.get("verdict", "not validated") if locks[m] else ("no lock" if m not in failed else "no result")
    sp = v.get("speedup")
    print("  %-32s %s; validate: %s%s" % (name, options(locks[m]), verdict,
          ", aggregate speedup %.3fx" % sp if isinstance(sp, (int, float)) else ""))
print()
fmt = "%-5s | %-17s | %-30s | %-30s | %s"
print(fmt % ("case", "baseline ms", "global winner ms (speedup, p)", "per-kernel winner ms (speedup, p)",
             "A/B locked builds: global / per-kernel ms (per-kernel speedup)"))
def cell(m, c):
    l = locks[m]
    cs, _ = validation(l)
    if not l:
        return "no result" if m in failed else "default compile"
    if c not in cs:
        return "not validated"
    x = cs[c]
    return "%.4f (%.3fx, p=%.2g)" % (x["winner_median"], x["baseline_median"] / x["winner_median"], x["p_value"])
worse = []
for c in cases:
    bases = []
    for m in ("on", "off"):
        cs, _ = validation(locks[m])
        if c in cs:
            bases.append("%.4f" % cs[c]["baseline_median"])
    g, k = ab.get((c, "off"), []), ab.get((c, "on"), [])
    if g and k:
        mg, mk = statistics.median(g), statistics.median(k)
        abcell = "%.4f / %.4f (%.3fx, ranges %.4f-%.4f / %.4f-%.4f)" % (mg, mk, mg / mk, min(g), max(g), min(k), max(k))
        if mk > mg * 1.01:
            worse.append(c)
    else:
        abcell = "not measured"
    print(fmt % (c, " / ".join(bases) or "-", cell("off", c), cell("on", c), abcell))
print("(baseline: the medians of validate on / off; speedup = baseline / winner; A/B: %s)" %
      "the program's own time_ms, interleaved")
if failed:
    print("per-kernel winner against the global winner: not judged, tune %s had no result" % " and ".join(failed))
elif ab:
    print("per-kernel winner at least as fast as the global winner on every case (A/B, 1%% margin): %s" %
          ("yes" if not worse else "no, slower on " + ", ".join(worse)))
PY
say "done after $(( $(date +%s) - t0 )) s; logs in $out"
