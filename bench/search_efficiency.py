"""bench/search_efficiency: evaluations each search strategy needs on the
recorded landscapes of bench/landscapes/ (compile-only ones recorded with real
compiles by bench/landscapes/record.sh, runtime ones on the H200 by
bench/landscapes/record_runtime.sh).

Every strategy gets the same landscapes, the same budget (every point of the
landscape) and the same seeds 1..N:
  - ciq's own strategies, replayed through ciq's Strategy code by the C++
    replayer (bench/search_efficiency.cpp), each with the pool_size ciq
    gives it by default on one worker (tpe 1, the others 8; --pool-size N
    for all);
  - Kernel Tuner's strategies in its simulation mode, from a Kernel Tuner
    cache file written from the landscape (its own format);
  - Optuna's TPE sampler, asked and told point by point.
A point is one evaluation the first time a strategy meets it (a repeat is a
cache hit, as in ciq and Kernel Tuner). ciq counts its baseline (every control
unset) as evaluation 1, and Optuna is given the same first point.
Printed per landscape: median and 90th percentile of the evaluations to the
optimum and to within 1% of it, and the ratio of the medians to random's;
then the same in binaries measured: the distinct device codes among those
evaluations (each point's `binary` in the landscape; `ciq tune` measures a
binary once and its twins cost no GPU time, issue 30). A landscape without
`binary` ids counts every point as its own binary.
A search that never got there within the budget counts as budget + 1 ('>').
"""
import argparse
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

# Kernel Tuner warns that the simulated kernel has no arguments or block sizes: true, and beside the point.
warnings.filterwarnings("ignore")

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--replayer", required=True, help="the built bench/search_efficiency binary")
ap.add_argument("--landscapes", nargs="*", help="landscape.json files (default: bench/landscapes/*/landscape.json)")
ap.add_argument("--seeds", type=int, default=30)
ap.add_argument("--first-seed", type=int, default=1, help="seeds FIRST..FIRST+N-1 (a second set checks a change is no fit to 1..N)")
ap.add_argument("--pool-size", type=int, default=0,
                help="pool_size of ciq's strategies (default 0: each one's own default for one worker, tpe 1, the others 8)")
ap.add_argument("--kt-strategies", default="random_sample,genetic_algorithm,simulated_annealing,greedy_ils,diff_evo",
                help="Kernel Tuner strategies (comma-separated; empty: none)")
ap.add_argument("--no-optuna", action="store_true")
ap.add_argument("--json", help="also write every count here")
ap.add_argument("--peers-from", help="take the peers' counts from an earlier --json file instead of running them")
args = ap.parse_args()

here = os.path.dirname(os.path.abspath(__file__))
skipped = []
if args.landscapes:
    paths = args.landscapes
else:
    # A landscape folder with its space but no recording yet (a runtime one
    # waits for the GPU host) is skipped with a note, not an error.
    paths = []
    for d in sorted(glob.glob(os.path.join(here, "landscapes", "*", "space.yaml"))):
        lj = os.path.join(os.path.dirname(d), "landscape.json")
        if os.path.exists(lj):
            paths.append(lj)
        else:
            skipped.append(os.path.basename(os.path.dirname(d)))
if not paths:
    sys.exit("search_efficiency: error: no landscape.json under bench/landscapes/; record them with bench/landscapes/record.sh")


class Landscape:
    """One recorded table: per point (state indices, -1 unset) its outcome."""

    def __init__(self, path):
        doc = json.load(open(path))
        self.name = doc["name"]
        self.kind = doc.get("kind", "compile")
        self.controls = doc["controls"]
        self.weights = doc.get("scalar_weights", [1024, 1])
        self.points = {}
        for p in doc["points"]:
            self.points[tuple(p["point"])] = p
        # states per control: values 0..n-1, then -1 (unset) -- read off the table
        self.states = [sorted({k[i] for k in self.points}, key=lambda v: (v < 0, v)) for i in range(len(self.controls))]
        self.budget = len(self.points)
        self.binaries = len({self.binary(p) for p in self.points.values()})
        self.best = min(self.true(p) for p in self.points.values() if p["status"] == "OK")

    @staticmethod
    def binary(rec):
        return rec.get("binary") or ("point", tuple(rec["point"]))

    def true(self, rec):
        obj = [statistics.median(rec["runs"])] if "runs" in rec else rec["scores"]
        return sum(w * o for w, o in zip(self.weights, obj))

    def measure(self, point, rng):
        """What a search sees: None for INVALID, else a (noisy, for runtime) scalar."""
        rec = self.points[point]
        if rec["status"] != "OK":
            return None
        if "runs" not in rec:
            return self.true(rec)
        runs = rec["runs"]
        return statistics.median(rng.choice(runs) for _ in runs)


class Counter:
    """Counts distinct evaluations and when the optimum / within 1% was met."""

    def __init__(self, land):
        self.land, self.seen, self.optimum, self.within1 = land, set(), 0, 0
        self.bins, self.optimum_binaries, self.within1_binaries = set(), 0, 0

    def visit(self, point):
        if point in self.seen:
            return
        self.seen.add(point)
        rec = self.land.points[point]
        self.bins.add(Landscape.binary(rec))
        if rec["status"] != "OK":
            return
        s, n = self.land.true(rec), len(self.seen)
        if not self.optimum and s <= self.land.best:
            self.optimum, self.optimum_binaries = n, len(self.bins)
        if not self.within1 and s <= self.land.best + 0.01 * abs(self.land.best):
            self.within1, self.within1_binaries = n, len(self.bins)

    def counts(self):
        return {"optimum": self.optimum, "within1": self.within1,
                "optimum_binaries": self.optimum_binaries, "within1_binaries": self.within1_binaries}

    def done(self):
        return bool(self.optimum) or len(self.seen) >= self.land.budget


def run_optuna(land, seed):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rng = random.Random(seed)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    names = ["c%d" % i for i in range(len(land.controls))]
    study.enqueue_trial({n: -1 for n in names})   # the baseline, as ciq starts
    c, cache = Counter(land), {}
    for _ in range(20 * land.budget):
        if c.done():
            break
        t = study.ask()
        point = tuple(t.suggest_categorical(n, land.states[i]) for i, n in enumerate(names))
        if point not in land.points:
            # Outside a constrained landscape's constraints: Optuna cannot be
            # told them up front; the failure teaches it, and, as for ciq,
            # nothing is built, so nothing is counted.
            study.tell(t, state=optuna.trial.TrialState.FAIL)
            continue
        if point not in cache:
            cache[point] = land.measure(point, rng)
            c.visit(point)
        v = cache[point]
        if v is None:
            study.tell(t, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(t, v)
    return c


def kt_cache(land, path):
    """The landscape as a Kernel Tuner cache file (simulation mode reads it)."""
    import kernel_tuner
    keys = ["c%d" % i for i in range(len(land.controls))]
    cache = {}
    for point, rec in land.points.items():
        entry = {k: v for k, v in zip(keys, point)}
        if rec["status"] == "OK":
            t = land.true(rec)
            runs = rec.get("runs", [t])
            entry.update({"time": t, "times": runs})
        else:
            entry.update({"time": "CompilationFailedConfig", "times": []})
        entry.update({"compile_time": 0, "verification_time": 0, "benchmark_time": 0, "strategy_time": 0,
                      "framework_time": 0, "timestamp": "2026-01-01T00:00:00Z"})
        cache[",".join(str(v) for v in point)] = entry
    doc = {"version": "1.0", "device_name": "landscape", "kernel_name": land.name, "problem_size": [1],
           "tune_params_keys": keys, "tune_params": {k: s for k, s in zip(keys, land.states)},
           "objective": "time", "cache": cache}
    json.dump(doc, open(path, "w"))
    return keys


def seed_latin_hypercube():
    """Kernel Tuner 1.5.0 draws diff_evo's first population from scipy's
    LatinHypercube without a seed, so scipy takes fresh OS entropy and no two
    runs repeat (gemm-h200, seeds 1..8: medians 16.5 and 21.5). Seeding it from
    NumPy's global generator, which run_kt seeds per search, makes the peer a
    function of the seed like every other strategy here."""
    from scipy.stats import qmc
    if getattr(qmc.LatinHypercube, "ciq_seeded", False):
        return
    import numpy

    class SeededLatinHypercube(qmc.LatinHypercube):
        ciq_seeded = True

        def __init__(self, d, **kw):
            if kw.get("rng") is None and kw.get("seed") is None:
                kw["rng"] = int(numpy.random.randint(2**31 - 1))
            super().__init__(d, **kw)

    qmc.LatinHypercube = SeededLatinHypercube


def run_kt(land, strategy, seed, cachefile):
    import numpy
    import kernel_tuner
    keys = ["c%d" % i for i in range(len(land.controls))]
    random.seed(seed)
    numpy.random.seed(seed)
    seed_latin_hypercube()
    # Kernel Tuner's diff_evo stopped on reduce-h200 with "module 'numpy' has
    # no attribute 'shuffle'": it reaches for numpy.shuffle, which NumPy never
    # had. It gets the function it meant, so every peer runs on every landscape.
    if not hasattr(numpy, "shuffle"):
        numpy.shuffle = numpy.random.shuffle
    # Kernel Tuner 1.5 rewrites a lambda restriction from its source text,
    # which takes only p['name'] subscripts (a generator over the keys became
    # a function of no parameters); a plain function gets the dict as is.
    def feasible(p):
        return tuple(p[k] for k in keys) in land.points

    results, _env = kernel_tuner.tune_kernel(
        land.name, "__global__ void %s() {}" % land.name, [1], [], {k: s for k, s in zip(keys, land.states)},
        strategy=strategy, strategy_options={"max_fevals": land.budget}, cache=cachefile, simulation_mode=True,
        # A constrained landscape records only the points its constraints
        # allow: Kernel Tuner's restrictions keep it inside them.
        restrictions=[feasible],
        verbose=False, quiet=True)
    c = Counter(land)
    for r in results:
        c.visit(tuple(r[k] for k in keys))
        if c.optimum:
            break
    return c


def stats(counts, budget):
    v = sorted(n if n else budget + 1 for n in counts)
    med = statistics.median(v)
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return med, p90


def fmt(x, budget):
    return (">%d" % budget) if x > budget else ("%g" % x)


lands = [Landscape(p) for p in paths]
seeds = range(args.first_seed, args.first_seed + args.seeds)
t0 = time.monotonic()
out = subprocess.run([args.replayer, "--seeds", str(args.seeds), "--first-seed", str(args.first_seed),
                      "--pool-size", str(args.pool_size)] + paths,
                     stdout=subprocess.PIPE, text=True, check=True).stdout
ciq = json.loads(out)
counts = {l.name: {("ciq " + s): v for s, v in ciq[l.name]["strategies"].items()} for l in lands}
ciq_s = time.monotonic() - t0

peers_note = []
if args.peers_from:
    earlier = json.load(open(args.peers_from))
    for l in lands:
        counts[l.name].update({k: v for k, v in earlier.get(l.name, {}).items() if not k.startswith("ciq ")})
    args.no_optuna, args.kt_strategies = True, ""
with tempfile.TemporaryDirectory(prefix="ciq-search-eff-") as tmp:
    for l in lands:
        if not args.no_optuna:
            runs = [run_optuna(l, s) for s in seeds]
            counts[l.name]["optuna tpe"] = {k: [c.counts()[k] for c in runs] for k in runs[0].counts()}
        kts = [s for s in args.kt_strategies.split(",") if s]
        if kts:
            cachefile = os.path.join(tmp, l.name + ".json")
            kt_cache(l, cachefile)
            for s in kts:
                try:
                    runs = [run_kt(l, s, seed, cachefile) for seed in seeds]
                except Exception as e:   # a strategy this Kernel Tuner lacks: say so, go on
                    peers_note.append("kernel tuner %s on %s: %s" % (s, l.name, str(e).splitlines()[0] if str(e) else type(e).__name__))
                    continue
                counts[l.name]["kt " + s] = {k: [c.counts()[k] for c in runs] for k in runs[0].counts()}

pool = ("pool_size %d" % args.pool_size if args.pool_size else
        "ciq's default pool_size for one worker (tpe 1: one point at a time; genetic, random, exhaustive 8)")
print("search_efficiency: %d landscapes, seeds %d..%d, %s, budget = every point of the landscape" %
      (len(lands), seeds[0], seeds[-1], pool))
for name in skipped:
    print("note: bench/landscapes/%s has no landscape.json yet (not recorded): skipped" % name)
print("columns: evaluations to the optimum / to within 1%% of it: median, 90th percentile, median / random's "
      "(ciq replay %.1f s)" % ciq_s)
summary = {}
for l in lands:
    c = counts[l.name]
    nopt = sum(1 for p in l.points.values() if p["status"] == "OK" and l.true(p) <= l.best)
    ninv = sum(1 for p in l.points.values() if p["status"] != "OK")
    print("\n## %s (%s, %d points, %d optimal, %d INVALID)" % (l.name, l.kind, l.budget, nopt, ninv))
    print("%-24s %8s %8s %7s | %8s %8s %7s" % ("strategy", "opt med", "opt p90", "x rand", "1% med", "1% p90", "x rand"))
    rnd_o, _ = stats(c["ciq random"]["optimum"], l.budget)
    rnd_w, _ = stats(c["ciq random"]["within1"], l.budget)
    for name, v in c.items():
        mo, po = stats(v["optimum"], l.budget)
        mw, pw = stats(v["within1"], l.budget)
        summary.setdefault(l.name, {})[name] = {"optimum_median": mo, "within1_median": mw}
        print("%-24s %8s %8s %7.2f | %8s %8s %7.2f" % (name, fmt(mo, l.budget), fmt(po, l.budget), mo / rnd_o,
                                                      fmt(mw, l.budget), fmt(pw, l.budget), mw / rnd_w))
    if l.binaries == l.budget:
        print("(no device-code identity recorded: every point counts as its own binary)")
        continue
    # What a GPU minute buys: the same searches in binaries measured.
    print("binaries measured (%d distinct among the %d points):" % (l.binaries, l.budget))
    bo, _ = stats(c["ciq random"].get("optimum_binaries", []) or [0], l.binaries)
    bw, _ = stats(c["ciq random"].get("within1_binaries", []) or [0], l.binaries)
    for name, v in c.items():
        if "optimum_binaries" not in v:   # counts from an older --peers-from file
            continue
        mo, po = stats(v["optimum_binaries"], l.binaries)
        mw, pw = stats(v["within1_binaries"], l.binaries)
        summary[l.name][name].update({"optimum_binaries_median": mo, "within1_binaries_median": mw})
        print("%-24s %8s %8s %7.2f | %8s %8s %7.2f" % (name, fmt(mo, l.binaries), fmt(po, l.binaries), mo / bo,
                                                      fmt(mw, l.binaries), fmt(pw, l.binaries), mw / bw))
# The goals of issue 19 for ciq's default strategy.
default = "ciq " + json.loads(subprocess.run([args.replayer, "--print-default"], stdout=subprocess.PIPE, text=True).stdout or '"tpe"')
half, beat = 0, 0
for l in lands:
    s = summary[l.name]
    d = s[default]["optimum_median"]
    half += d <= 0.5 * s["ciq random"]["optimum_median"]
    peers = [v["optimum_median"] for k, v in s.items() if not k.startswith("ciq ")]
    beat += (not peers) or d <= min(peers)
print("\ngoals for the default (%s), median evaluations to the optimum:" % default)
print("  at most half of random's on every landscape: %d of %d landscapes -> %s" %
      (half, len(lands), "met" if half == len(lands) else "NOT met"))
print("  no more than the best peer on >= 2/3 of the landscapes: %d of %d -> %s" %
      (beat, len(lands), "met" if 3 * beat >= 2 * len(lands) else "NOT met"))
# The same goals in binaries measured (what a GPU minute buys, issue 30),
# on the landscapes that record device-code identity.
withbin = [l for l in lands if "optimum_binaries_median" in summary[l.name].get(default, {})]
if withbin:
    half, beat = 0, 0
    for l in withbin:
        s = summary[l.name]
        d = s[default]["optimum_binaries_median"]
        half += d <= 0.5 * s["ciq random"]["optimum_binaries_median"]
        peers = [v["optimum_binaries_median"] for k, v in s.items()
                 if not k.startswith("ciq ") and "optimum_binaries_median" in v]
        beat += (not peers) or d <= min(peers)
    print("the same, median binaries measured to the optimum (%d landscapes with device-code identity):" % len(withbin))
    print("  at most half of random's: %d of %d landscapes -> %s" %
          (half, len(withbin), "met" if half == len(withbin) else "NOT met"))
    print("  no more than the best peer on >= 2/3 of the landscapes: %d of %d -> %s" %
          (beat, len(withbin), "met" if 3 * beat >= 2 * len(withbin) else "NOT met"))
for n in peers_note:
    print("note:", n)
if args.json:
    json.dump(counts, open(args.json, "w"), indent=1)
