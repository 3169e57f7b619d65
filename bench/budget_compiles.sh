#!/bin/sh
# Issue 41 item 7: what a compile-only budget of distinct device codes costs.
# Tunes a copy of examples/spill (compile-only, its ciq_tune(): TPE, SEED 1,
# the curated ptxas space) with --max-evaluations BUDGET and prints the
# configurations compiled (the summary's figure, and the candidates' build
# logs counted apart), the distinct device codes, and the wall time.
# No GPU; about 1 s per compile here (2 cores), so ~30 s for a budget of 10.
#
# usage: bench/budget_compiles.sh <ciq build dir> [budget] [work dir]
# e.g.   bench/budget_compiles.sh build 10 /tmp/budget10
set -eu
ciq_build=$(cd "$1" && pwd)
budget=${2:-10}
work=${3:-$(mktemp -d)}
src=$(cd "$(dirname "$0")/.." && pwd)/examples/spill
rm -rf "$work" && mkdir -p "$work"
cp -r "$src" "$work/src" && rm -f "$work"/src/*.ciq.lock
cmake -S "$work/src" -B "$work/build" -G Ninja -DCompileIQ_DIR="$ciq_build/lib/cmake/CompileIQ" > "$work/configure.log" 2>&1
cfg="$work/build/ciq/spill_bench/ciq.yaml"
start=$(date +%s.%N)
"$ciq_build/bin/ciq" tune --config "$cfg" --no-lock --max-evaluations "$budget" > "$work/tune.log" 2>&1
end=$(date +%s.%N)
grep -m1 'ciq: tuning' "$work/tune.log" || true
grep -E '^(evaluations|search ended):' "$work/tune.log" || true
logs=$(ls "$work/build/ciq/spill_bench/logs" | grep -c '^c[0-9]*\.log$' || true)
echo "budget $budget: candidate build logs $logs; wall $(echo "$end - $start" | bc) s (log: $work/tune.log)"
