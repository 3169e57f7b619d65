#!/usr/bin/env bash
# Issue 21 on a GPU host: adaptive repeats + racing against fixed REPEATS 5.
#
#   bench/adaptive_gpu.sh [BUILD_DIR [OUT_DIR [noisy|examples|all]]]
#
# 1. noisy: the stand-in of the engine tests (tests/lit/engine/Inputs/standin,
#    a real CUDA build that launches nothing) with uniform +-JITTER% run-time
#    jitter (default 10) and one control, --maxrregcount=32, that is truly 3%
#    faster (10.0 -> 9.7 ms). SEEDS seeded tunes (default 5) per mode; the
#    right verdict is "c0001 beats the default compile". The adaptive mode
#    uses max_repeats NOISY_MAX_REPEATS (default 200): at +-10% jitter a 3%
#    difference needs about 130 runs per side for p < 0.01.
# 2. examples: gemm, stencil, reduce (examples/; EXAMPLES="..." picks some), EVALUATIONS evaluations
#    each (default 12, seed 1), once with the examples' REPEATS 5 and once
#    with repeats: adaptive (racing on, max_repeats 20, target 1%).
#    MODES="adaptive" runs one mode only (both halves).
# Per tune it prints the benchmark runs made, from the tune's run directory
# (bench/adaptive_runs.py): the journal's measured runs of the search (the
# summary's "benchmark runs:" figure, results.csv's `runs`), of the
# finalists and of the attribution, their total, and every process start of
# the benchmark in the run logs (adds warm-ups and the minimization); the
# wall time of the tune and the verdict line; then the totals per mode and
# the ratios. Needs CUDA 13.0, CMake, Ninja, python3; no network. About 2 min
# per example tune on one H200.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-build}" && pwd)"
out="${2:-$(mktemp -d /tmp/ciq-adaptive-gpu.XXXXXX)}"
part="${3:-all}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
ciq="$build/bin/ciq"
module="$build/lib/cmake/CompileIQ"
export PATH="$build/bin:/usr/local/cuda/bin:$PATH"
[ -x "$ciq" ] || { echo "adaptive_gpu: error: no $ciq; build ciq first (cmake --build $build)" >&2; exit 1; }
jitter="${JITTER:-10}"; seeds="${SEEDS:-5}"; n="${EVALUATIONS:-12}"

# runs <tune output> <run dir expected>: "search N finalists N attribution N
# total N starts N" (bench/adaptive_runs.py) of the run directory the tune
# printed ("results: <run dir>/results.csv"), else of the one expected.
runs() {
  local dir; dir=$(sed -n 's/.*results: \(.*\)\/results\.csv$/\1/p' "$1" | tail -n 1)
  [ -n "$dir" ] || dir="$2"
  python3 "$repo/bench/adaptive_runs.py" "$dir" || echo "search 0 finalists 0 attribution 0 total 0 starts 0"
}
field() { echo "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i += 2) if ($i == k) { print $(i + 1); exit } print 0 }'; }
show() { # counts -> "T benchmark runs (search S, finalists F, attribution A; P process starts)"
  printf '%5d benchmark runs (search %d, finalists %d, attribution %d; %d process starts)' "$(field "$1" total)" \
    "$(field "$1" search)" "$(field "$1" finalists)" "$(field "$1" attribution)" "$(field "$1" starts)"
}
secs() { python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
verdict() { grep -m1 '^verdict:' "$1" || echo "verdict: (none: see $1)"; }

declare -A total
record() { # mode counts: adds its total and process starts to the mode's
  total[$1]=$(( ${total[$1]:-0} + $(field "$2" total) ))
  total[$1-starts]=$(( ${total[$1-starts]:-0} + $(field "$2" starts) ))
}

noisy() {
  local src="$repo/tests/lit/engine/Inputs/standin" b="$out/noisy/build"
  mkdir -p "$out/noisy"
  cmake -S "$src" -B "$b" -G Ninja -DCompileIQ_DIR="$module" > "$out/noisy/configure.log" 2>&1 ||
    { echo "noisy: configure failed ($out/noisy/configure.log)"; return 1; }
  for mode in ${MODES:-fixed5 adaptive}; do
    local measure="  repeats: 5"
    [ $mode = adaptive ] && measure="  repeats: adaptive
  max_repeats: ${NOISY_MAX_REPEATS:-200}
  max_measure_s: 600"
    for seed in $(seq 1 "$seeds"); do
      local name="$mode-seed$seed" cfg="$out/noisy/$mode-seed$seed.yaml"
      cat > "$cfg" <<YAML
target: app
build_dir: build
lockfile: $name.lock
run_dir: run-$name
objectives: [time_ms]
benchmark:
  command: [./app, runs-$name.txt]
  warmup: 1
$measure
  finalists: 1
  metric: {regex: 'time_ms=([-0-9.]+)'}
search: {strategy: exhaustive, pool_size: 1, generations: 1, canary: false}
space:
  controls:
    - {name: maxrreg, ptxas: "--maxrregcount={}", literal: 32}
YAML
      local t0 t1
      t0=$(date +%s.%N)
      ( cd "$out/noisy" && STANDIN_JITTER_PERCENT="$jitter" STANDIN_SEED="$seed" \
          "$ciq" tune --fresh --config "$cfg" > "$out/noisy/$name.out" 2>&1 )
      t1=$(date +%s.%N)
      # run_dir is relative to the config's directory, not the build's
      local r; r=$(runs "$out/noisy/$name.out" "$out/noisy/run-$name")
      record "noisy-$mode" "$r"
      local ok=wrong; grep -q '^verdict: c0001' "$out/noisy/$name.out" && ok=right
      printf '%-22s %s %7s s  %-5s  %s\n' "noisy $name" "$(show "$r")" "$(secs "$t0" "$t1")" "$ok" \
        "$(verdict "$out/noisy/$name.out")"
      [ $ok = right ] && total[noisy-$mode-right]=$(( ${total[noisy-$mode-right]:-0} + 1 ))
    done
  done
}

examples() {
  for ex in ${EXAMPLES:-gemm stencil reduce}; do
    local bench=${ex}_bench
    for mode in ${MODES:-fixed5 adaptive}; do
      local b="$out/$ex-$mode"
      rm -rf "$b"
      cmake -S "$repo/examples/$ex" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCompileIQ_DIR="$module" > "$b.configure.log" 2>&1 || { echo "$ex: configure failed ($b.configure.log)"; continue; }
      local cfg="$b/ciq/$bench/ciq.yaml"
      [ -f "$cfg" ] || { echo "$ex: no $cfg"; continue; }
      [ $mode = adaptive ] && sed -i 's/^  repeats: 5$/  repeats: adaptive/' "$cfg"
      grep -q "^  repeats: $([ $mode = adaptive ] && echo adaptive || echo 5)\$" "$cfg" ||
        { echo "$ex: cannot set the repeats of $cfg"; continue; }
      local t0 t1
      t0=$(date +%s.%N)
      "$ciq" tune --fresh --config "$cfg" --max-evaluations "$n" --no-lock > "$b.out" 2>&1
      t1=$(date +%s.%N)
      local r; r=$(runs "$b.out" "$b/ciq/$bench")
      record "examples-$mode" "$r"
      printf '%-22s %s %7s s  %s\n' "$ex $mode" "$(show "$r")" "$(secs "$t0" "$t1")" "$(verdict "$b.out")"
      grep -E '^(benchmark runs|racing|noise):' "$b.out" | sed 's/^/    /'
    done
  done
}

echo "adaptive_gpu: outputs in $out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null || echo "(no nvidia-smi)"
[ "$part" = examples ] || noisy
[ "$part" = noisy ] || examples
echo "== totals"
for k in noisy-fixed5 noisy-adaptive examples-fixed5 examples-adaptive; do
  [ -n "${total[$k]:-}" ] && printf '%-20s %6d benchmark runs (journal), %6d process starts (logs)\n' "$k" \
    "${total[$k]}" "${total[$k-starts]}"
done
[ "$part" = examples ] || printf 'noisy stand-in right verdicts: fixed REPEATS 5 %d/%d, adaptive+racing %d/%d\n' \
  "${total[noisy-fixed5-right]:-0}" "$seeds" "${total[noisy-adaptive-right]:-0}" "$seeds"
if [ -n "${total[examples-fixed5]:-}" ] && [ "${total[examples-fixed5]}" -gt 0 ]; then
  python3 -c "import sys; f,a,fs,as_=map(int,sys.argv[1:]); print('examples: adaptive+racing used %.0f%% fewer benchmark runs than REPEATS 5 (%d against %d; process starts: %.0f%% fewer, %d against %d; goal: at least 30%%, same verdicts)' % (100*(f-a)/f, a, f, 100*(fs-as_)/max(fs,1), as_, fs))" \
    "${total[examples-fixed5]}" "${total[examples-adaptive]:-0}" "${total[examples-fixed5-starts]}" "${total[examples-adaptive-starts]:-0}"
fi
