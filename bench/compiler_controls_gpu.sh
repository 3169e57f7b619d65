#!/usr/bin/env bash
# Issue 40 on a GPU: what tuning the compilers alone gives, no application
# parameter, validated, over the GPU examples and bench/heavy; the median.
#
#   bench/compiler_controls_gpu.sh <ciq prefix> <out dir> [program...]
#
# Programs (default: spill heavy gemm nbody stencil reduce; multikernel too
# on request): examples/<name>, bench/heavy, bench/multikernel. Each is
# copied to <out>/<name>/src, its ciq_tune() call rewritten to
#
#   ciq_tune(<bench> [TUNE_TARGETS <its own>] BENCHMARK $<TARGET_FILE:<bench>>
#            METRIC time_ms WARMUP 1 RUN_TIMEOUT 120 BUDGET <budget> SEED 1)
#
# (no SPACE: the default runtime space, ptxas-13.0-default less --fmad, plus
# per-kernel PTX directives once the baseline names the kernels; none of the
# program's -D parameters, CASEs or nvcc controls), configured, checked (the
# generated ciq.yaml has no space: and `ciq sample` renders no -D), tuned
# with `ciq tune --max-evaluations <budget>`, and validated with `ciq
# validate`. Per program: the validated speedup and p-value, the winning
# options and the tune's attribution lines (compiler controls only,
# per-kernel controls only, ...). A program with no lock counts as 1.000x
# (the default compile stands). At the end, the median over every program in
# <out>/results.tsv, so that two runs into the same <out dir> with three
# programs each give the median of all six (MERGE_RESULTS=<results.tsv of a
# run elsewhere>[:...] counts its rows too).
#
# Programs run one after another, each step under `timeout`; partial results
# are written as they come (<out>/results.tsv, <out>/summary.txt). A program
# is not started when less than MIN_PROGRAM_S (100) of DEADLINE_S (470)
# seconds are left; its tune gets at most TUNE_TIMEOUT_S (220), its validate
# VALIDATE_TIMEOUT_S (100), both cut to the time left. BUDGET (default 6)
# distinct binaries per tune. Needs CUDA 13.0, cmake, python3; ninja if present.
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq prefix> <out dir> [spill|heavy|gemm|nbody|stencil|reduce|multikernel ...]" >&2; exit 2; }
prefix=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no ciq prefix at '$1'" >&2; exit 2; }
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
shift 2
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(spill heavy gemm nbody stencil reduce)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ciq="$prefix/bin/ciq"
module="$prefix/lib/cmake/CompileIQ"
if [ ! -x "$ciq" ] || [ ! -d "$module" ]; then echo "$0: $prefix has no bin/ciq and lib/cmake/CompileIQ" >&2; exit 2; fi
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
budget=${BUDGET:-6}
deadline=${DEADLINE_S:-470}
min_program=${MIN_PROGRAM_S:-100}
tune_limit=${TUNE_TIMEOUT_S:-220}
validate_limit=${VALIDATE_TIMEOUT_S:-100}

summary="$out/summary.txt"
results="$out/results.tsv"
[ -f "$results" ] || printf 'program\tspeedup\tp_value\tverdict\ttune_exit\tvalidate_exit\twall_s\twinning_options\n' >"$results"
t0=$(date +%s)
say() { echo "$*" | tee -a "$summary"; }
left() { echo $(( deadline - ($(date +%s) - t0) )); }

# step <program> <name> <limit s> <command...>: output to <out>/<program>/<name>.log,
# exit status and wall time to <out>/steps.tsv; returns the exit status.
step() {
  local p=$1 name=$2 limit=$3 start rc
  shift 3
  start=$(date +%s)
  echo "\$ $*" >"$out/$p/$name.log"
  timeout --kill-after=20 "$limit" "$@" >>"$out/$p/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\t%s\n' "$p" "$name" "$rc" "$(( $(date +%s) - start ))" >>"$out/steps.tsv"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then say "  $p: $name timed out after $limit s"; fi
  return $rc
}

# Rewrites every ciq_tune(...) call of a CMakeLists.txt (balanced parentheses)
# into one over the default space; prints the tuned target's name.
rewrite() {
  python3 - "$1" "$budget" <<'PY'
import re, sys
path, budget = sys.argv[1], sys.argv[2]
text = open(path).read()
out, pos, target = [], 0, None
for m in re.finditer(r"\bciq_tune\(", text):
    if m.start() < pos:
        continue
    depth, i = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    args = re.sub(r"#[^\n]*", "", text[m.end():i - 1]).split()
    target = args[0]
    tune_targets = []
    if "TUNE_TARGETS" in args:
        for a in args[args.index("TUNE_TARGETS") + 1:]:
            if re.fullmatch(r"[A-Z_]+", a):
                break
            tune_targets.append(a)
    call = "ciq_tune(%s%s BENCHMARK $<TARGET_FILE:%s> METRIC time_ms WARMUP 1 RUN_TIMEOUT 120 BUDGET %s SEED 1)" % (
        target, " TUNE_TARGETS " + " ".join(tune_targets) if tune_targets else "", target, budget)
    out.append(text[pos:m.start()] + call)
    pos = i
if target is None:
    sys.exit("no ciq_tune() call in " + path)
open(path, "w").write("".join(out) + text[pos:])
print(target)
PY
}

say "compiler controls alone: ${programs[*]}; budget $budget distinct binaries each; deadline $deadline s; $(date -u +%FT%TZ)"
{ nvidia-smi -L 2>&1 | head -1; "$ciq" --version 2>&1 | head -1; } | tee -a "$summary"

run_program() {
  local p=$1 src start
  start=$(date +%s)
  case $p in
    heavy | multikernel) src="$here/bench/$p" ;;
    *) src="$here/examples/$p" ;;
  esac
  [ -f "$src/CMakeLists.txt" ] || { say "$p: no CMake program at $src"; return 1; }
  local d="$out/$p"
  rm -rf "$d" && mkdir -p "$d" && cp -r "$src" "$d/src" && rm -f "$d/src/"*.ciq.lock "$d/src/ciq.lock" || return 1
  local target
  target=$(rewrite "$d/src/CMakeLists.txt") || { say "$p: could not rewrite its ciq_tune() call"; return 1; }
  grep -n "ciq_tune(" "$d/src/CMakeLists.txt" >"$d/ciq_tune.txt"
  step "$p" configure 120 cmake -S "$d/src" -B "$d/build" "${gen[@]}" -DCompileIQ_DIR="$module" ||
    { say "$p: configure failed ($d/configure.log)"; return 1; }
  local yaml="$d/build/ciq/$target/ciq.yaml" lock="$d/src/$target.ciq.lock"
  # No application parameter may remain: the default space (no space: key),
  # no cases, and nothing rendered as -D.
  if grep -qE '^(space|constraints):|^  cases:' "$yaml"; then
    say "$p: $yaml still names a space, constraints or cases: not compiler controls alone"; return 1
  fi
  step "$p" sample 60 "$ciq" sample 5 --config "$yaml" || { say "$p: ciq sample failed ($d/sample.log)"; return 1; }
  if grep -qE '(^| )-D[A-Za-z_]' "$d/sample.log"; then say "$p: the space renders -D parameters ($d/sample.log)"; return 1; fi
  local limit=$(( $(left) - 30 ))
  (( limit > tune_limit )) && limit=$tune_limit
  step "$p" tune "$limit" "$ciq" tune --config "$yaml" --max-evaluations "$budget"
  local tune_rc=$? validate_rc=-
  grep -E "^(ciq: error|per-kernel controls|search ended|verdict|winning options|minimization: kept)|^attribution|^  (baseline|compiler|per-kernel|both|winner)" \
    "$d/tune.log" | sed "s/^/  $p: /" | tee -a "$summary"
  if [ -f "$lock" ]; then
    limit=$(left)
    (( limit > validate_limit )) && limit=$validate_limit
    if (( limit >= 20 )); then
      step "$p" validate "$limit" "$ciq" validate --config "$yaml"
      validate_rc=$?
      grep -E "^  (baseline|winner|speedup|verdict)" "$d/validate.log" | sed "s/^/  $p: validate: /" | tee -a "$summary"
    else
      say "  $p: no time left to validate"
    fi
  fi
  # One row: the validated figures where there are some, else the tune's, else 1.000x (no lock).
  python3 - "$p" "$lock" "$tune_rc" "$validate_rc" "$(( $(date +%s) - start ))" >>"$results" <<'PY'
import json, sys
p, lock, tune_rc, validate_rc, wall = sys.argv[1:]
try:
    l = json.load(open(lock))
    l = next(iter(l["architectures"].values())) if l.get("schema_version", 1) >= 2 else l  # the one section of this GPU
except (OSError, ValueError):
    l = None
if l is None and tune_rc != "0":
    why = "timed out" if tune_rc in ("124", "137") else "failed (exit %s)" % tune_rc
    row = ["n/a", "-", "the tune " + why + ", no lock: not counted", "-"]
elif l is None:
    row = ["1.000", "-", "no lock: no candidate beat the default compile, which stands", "-"]
else:
    s = l.get("score", {})
    v = s.get("validation") or {}
    r = l.get("winner", {}).get("rendered", {})
    opts = ["-Xptxas " + o for o in r.get("ptxas", [])] + r.get("nvcc", []) + ["-D" + d for d in r.get("defines", [])]
    opts += ["kernel %s: .%s %s" % (k.get("label") or k.get("kernel"), k.get("directive"), k.get("value"))
             for k in r.get("kernels", [])]
    if isinstance(v.get("speedup"), (int, float)):
        row = ["%.4f" % v["speedup"], "%.3g" % v.get("p_value", float("nan")), "validated: " + str(v.get("verdict"))]
    elif isinstance(s.get("speedup"), (int, float)):
        row = ["%.4f" % s["speedup"], "%.3g" % s.get("p_value", float("nan")), "not validated: the tune's finalists"]
    else:
        row = ["1.000", "-", "lock without a speedup"]
    row.append(" ".join(opts) or "(none)")
print("\t".join([p, row[0], row[1], row[2], tune_rc, validate_rc, wall, row[3]]))
PY
  say "$p: $(tail -1 "$results" | cut -f2-4 | tr '\t' ' ') after $(( $(date +%s) - start )) s"
}

for p in "${programs[@]}"; do
  if (( $(left) < min_program )); then
    say "$p: skipped, $(left) s left of the $deadline s deadline (run it on its own: $0 <prefix> $out $p)"
    continue
  fi
  say "== $p ($(( $(date +%s) - t0 )) s in)"
  if ! run_program "$p"; then
    say "$p: failed; see $out/$p/"
    printf '%s\tn/a\t-\tfailed before the tune (see %s)\t-\t-\t-\t-\n' "$p" "$out/$p" >>"$results"
  fi
done

# The median over every program measured into this folder (this run and
# earlier ones), and over the rows of MERGE_RESULTS (results.tsv files of
# runs elsewhere, separated by ':'), which this folder's rows override.
python3 - "$results" "${MERGE_RESULTS:-}" <<'PY' | tee -a "$summary"
import statistics, sys
rows = {}
for path in [p for p in sys.argv[2].split(":") if p] + [sys.argv[1]]:
    for line in open(path).read().splitlines()[1:]:
        f = line.split("\t")
        if len(f) == 8:
            rows[f[0]] = f  # the last run of each program counts
print()
print("%-12s %9s %10s  %s" % ("program", "speedup", "p", "verdict / winning options"))
for p, f in rows.items():
    print("%-12s %9s %10s  %s; %s" % (p, f[1] + ("x" if f[1] != "n/a" else ""), f[2], f[3], f[7]))
sp = [float(f[1]) for f in rows.values() if f[1] != "n/a"]
left_out = [p for p, f in rows.items() if f[1] == "n/a"]
if left_out:
    print("not counted (no result): " + ", ".join(left_out))
if sp:
    print("median speedup over %d program(s): %.4fx (geometric mean %.4fx)" % (
        len(sp), statistics.median(sp), statistics.geometric_mean(sp)))
PY
say "done after $(( $(date +%s) - t0 )) s; logs under $out"
