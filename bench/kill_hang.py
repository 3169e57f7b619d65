#!/usr/bin/env python3
"""Kill it and hang it: the figures of issue 15, as a script.

Runs a seeded search uninterrupted, then the same search killed with SIGKILL
at --kill-points moments (alternately while a compile runs and right after an
evaluation was recorded), each followed at once by `ciq resume`, and prints:

  lost evaluations      reference evaluations missing from the resumed search
  repeated evaluations  candidate ids or (generation, point) recorded twice
  changed scores        evaluations whose status, reason or scores differ
  changed winners       1 if the winner differs from the uninterrupted one
  surviving processes   processes of a killed engine's build still alive when
                        its successor started building (or ended)

then --hang-trials searches whose compiles hang (a launcher that sleeps),
with timeouts.build_s, and one SIGTERM of `ciq tune` while a compile hangs:

  build timeouts reported, surviving processes after ciq ended (counted at
  once: ciq exits only when they are gone), candidate objects left in the
  build tree;

then (issue 29) --signal-trials searches in which the real cicc or ptxas
(alternately) is killed with SIGKILL once during a candidate's compile, as
the OOM killer does (tests/lit/engine/Inputs/killing_cuda.py):

  compiler stages killed, built once more and OK, blamed on the candidate;

and --setsid-trials searches in which a candidate's compile starts a child
in a session of its own (setsid) and hangs past timeouts.compile_s
(tests/lit/engine/Inputs/setsid_child.sh), and searches whose benchmark
leaves a helper that keeps its stdout open (Inputs/helper_bench.py):

  compile timeouts reported, surviving setsid children; benchmark runs that
  ended with the benchmark (not at benchmark.timeout_s), surviving helpers.

Goal: every count of lost, changed, blamed or surviving things 0 (and every
timeout reported, every killed compile built once more). Exit status 1
otherwise.

usage: kill_hang.py --ciq BIN --module-dir DIR --project DIR --work DIR
                    [--kill-points 10] [--hang-trials 3] [--budget 16]
                    [--signal-trials 10] [--setsid-trials 3] [--nvcc NVCC]
                    [--build-kill-trials 8] [--only-build-kills]
(issue 49) --phase-kills: a tune killed once in each phase after the search
(finalists, minimization, rehearsal, attribution) and resumed, instead of
all of the above (bench/phase_kills.py): repeated benchmark runs, goal 0.

and (issue 42) --build-kill-trials searches killed with SIGKILL once during a
build, at its start, during cicc/cudafe++, a host compile and the link in
turn:

  builds with processes 1 s (and 5 s) after the kill;

--only-build-kills runs those alone (about 10 s a trial here):
  python3 bench/kill_hang.py --ciq build/bin/ciq --module-dir build/lib/cmake/CompileIQ \
      --project tests/lit/engine/Inputs/proj --work /tmp/ciq-build-kills --only-build-kills \
      --build-kill-trials 8
(CIQ_TEST_UNGUARDED_BUILDS=1 in front: the builds without ciq-build-guard,
as before it.)

The CI variant (tests/lit/engine/kill-hang.test) runs 3 kill points, 1
hang trial, 2 signal trials and 1 setsid trial on the lit project; the full
one, on the same project:
  python3 bench/kill_hang.py --ciq build/bin/ciq \
      --module-dir build/lib/cmake/CompileIQ --project tests/lit/engine/Inputs/proj \
      --work /tmp/ciq-kill-hang --kill-points 10 --hang-trials 3 --budget 16 \
      --signal-trials 10 --setsid-trials 3
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--ciq", required=True)
p.add_argument("--module-dir", required=True)
p.add_argument("--project", required=True)
p.add_argument("--work", required=True)
p.add_argument("--kill-points", type=int, default=10)
p.add_argument("--hang-trials", type=int, default=3)
p.add_argument("--budget", type=int, default=16)
p.add_argument("--signal-trials", type=int, default=10)
p.add_argument("--setsid-trials", type=int, default=3)
p.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
p.add_argument("--build-kill-trials", type=int, default=8)
p.add_argument("--only-build-kills", action="store_true",
               help="run the --build-kill-trials alone (a minute or two), then exit")
p.add_argument("--phase-kills", action="store_true",
               help="kill once in every phase after the search instead (bench/phase_kills.py, issue 49): "
                    "repeated benchmark runs, goal 0; --project is not used")
args = p.parse_args()
if args.phase_kills:
    sys.exit(subprocess.call([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "phase_kills.py"),
                              "--ciq", args.ciq, "--module-dir", args.module_dir, "--work", args.work]))
# The searches run in other directories: the paths given must not depend on
# where this script was started (the docstring's command uses relative ones).
for name in ("ciq", "module_dir", "project", "work"):
    setattr(args, name, os.path.abspath(getattr(args, name)))
TIMEOUT = 600
work = os.path.abspath(args.work)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lit", "engine", "Inputs")
# A launcher in front of nvcc that, while the flag file exists, starts a
# child in a session of its own (out of reach of any process group; it
# appends "<pid> <start time>" to hang.pids) and hangs; then the setsid
# trials' launcher (which passes through unless SETSID_CHILD_PIDS is set).
hang = os.path.join(work, "hang.sh")
hang_pids = os.path.join(work, "hang.pids")
with open(hang, "w") as f:
    f.write('#!/bin/sh\nif [ -e "%s/hang.flag" ]; then\n'
            '  setsid sh -c \'echo "$$ $(cut -d" " -f22 /proc/$$/stat)" >> "%s"; exec sleep 1000\' &\n'
            '  sleep 1000\nfi\nexec "%s" "$@"\n' % (work, hang_pids, os.path.join(INPUTS, "setsid_child.sh")))
os.chmod(hang, 0o755)
proj = os.path.join(work, "proj")
shutil.copytree(args.project, proj)
build = os.path.join(work, "build")
subprocess.check_call(["cmake", "-S", proj, "-B", build, "-G", "Ninja", "-DCompileIQ_DIR=" + args.module_dir,
                       "-DCMAKE_CUDA_COMPILER_LAUNCHER=" + hang], stdout=subprocess.DEVNULL)

SPACE = """objectives: [registers, spill_bytes]
space:
  controls:
    - name: opt-level
      ptxas: "--opt-level={}"
      choice: [1, 2, 3]
    - name: maxrregcount
      ptxas: "--maxrregcount={}"
      choice: [32, 40, 64]
    - name: register-usage-level
      ptxas: "--register-usage-level={}"
      choice: [0, 5, 10]
    - name: tile
      define: TILE
      choice: [2, 4, 8]
"""


def config(name, extra=""):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write("target: app\nbuild_dir: build\nlockfile: %s.lock\nrun_dir: run-%s\n" % (name, name) + SPACE +
                "search:\n  strategy: genetic\n  pool_size: 4\n  generations: %d\n  max_evaluations: %d\n"
                "  seed: 7\n  canary: false\n" % (args.budget, args.budget) + extra)
    return path, os.path.join(work, "run-" + name)


def journal(run_dir):
    lines = []
    try:
        with open(os.path.join(run_dir, "journal.jsonl"), "rb") as f:
            for raw in f:
                try:
                    lines.append(json.loads(raw))
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return lines


def evaluations(run_dir):
    return [j for j in journal(run_dir) if j.get("op") == "evaluation"]


def environ(pid):
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    except OSError:
        return None


def processes(run_dir):
    """pid -> (engine token, command) of every process of a build of run_dir."""
    found = {}
    key = os.path.realpath(run_dir).encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        env = environ(pid)
        if env and os.path.realpath(env.get(b"CIQ_RUN_DIR", b"") or b"/nonexistent") == key:  # bytes: any run dir
            try:
                comm = open("/proc/%s/comm" % pid, errors="replace").read().strip()
            except OSError:
                comm = "?"
            found[int(pid)] = (env.get(b"CIQ_ENGINE_TOKEN", b""), comm)
    return found


def compiling(run_dir):
    return any(c in ("nvcc", "cicc", "ptxas", "cudafe++", "sleep", "gcc", "cc1plus")
               for _, c in processes(run_dir).values())


def wait_for(cond, proc):
    deadline = time.time() + TIMEOUT
    while not cond():
        if proc.poll() is not None or time.time() > deadline:
            return False
        time.sleep(0.01)
    return True


def still_running(pid_file):
    """Of the "<pid> <start time>" lines in pid_file, the processes still running (then ended by pid)."""
    alive = []
    for line in open(pid_file) if os.path.exists(pid_file) else []:
        pid, start = line.split()
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[19] == start and fields[0] not in ("Z", "X"):
            alive.append(int(pid))
    for pid in alive:
        os.kill(pid, signal.SIGKILL)  # a process this script's search started, by pid
    return len(alive)


def run_ciq(argv, log):
    return subprocess.Popen([args.ciq] + argv, stdout=open(log, "a"), stderr=subprocess.STDOUT)


def old_survivors(run_dir, old_tokens, resume):
    """Old-engine processes alive when the resumed engine first builds (or ends)."""
    seen = 0
    while True:
        procs = processes(run_dir)
        old = [pid for pid, (tok, _) in procs.items() if tok in old_tokens]
        new = [pid for pid, (tok, _) in procs.items() if tok and tok not in old_tokens]
        if new or resume.poll() is not None:
            return len(old)
        seen = max(seen, len(old))
        time.sleep(0.01)


# Issue 42 item 7: kill -9 of `ciq tune` during a build, at the build's
# start, while cicc or cudafe++ runs, during a host compile (gcc, cc1plus)
# and during the link, in turn; then how many builds still had processes
# 1 s later (and 5 s later). Each trial is a fresh search, killed once.
KILL_STAGES = [("at the build's start", None), ("during cicc/cudafe++", ("cicc", "cudafe++")),
               ("during a host compile", ("gcc", "cc1plus", "g++", "c++")),
               ("during the link", ("ld", "collect2", "nvlink"))]


def build_kills(trials):
    landed = {name: 0 for name, _ in KILL_STAGES}
    after1 = after5 = procs1 = 0
    for t in range(trials):
        name, comms = KILL_STAGES[t % len(KILL_STAGES)]
        kcfg, krun = config("buildkill%d" % t)
        proc = run_ciq(["tune", "--fresh", "--config", kcfg, "--no-lock"], krun + ".log")
        if comms is None:
            hit = wait_for(lambda: bool(processes(krun)), proc)
        else:
            hit = wait_for(lambda: any(c in comms for _, c in processes(krun).values()), proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = time.time()
        if not hit:
            continue  # the search ended before this stage ran: no kill landed in a build
        landed[name] += 1
        time.sleep(max(0, killed + 1 - time.time()))
        left = processes(krun)
        procs1 += len(left)
        after1 += int(bool(left))
        while processes(krun) and time.time() < killed + 5:
            time.sleep(0.05)
        left = processes(krun)
        after5 += int(bool(left))
        for pid in left:  # this script's own search's processes, by pid
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    kills = sum(landed.values())
    print("build kills: %d (%s)" % (kills, ", ".join("%d %s" % (n, k) for k, n in landed.items())))
    print("builds with processes 1 s after the kill: %d of %d (%d processes); 5 s after: %d" %
          (after1, kills, procs1, after5))
    return after1 + after5  # a stage the search never reached is no survivor


if args.only_build_kills:
    sys.exit(1 if build_kills(args.build_kill_trials) else 0)

# The uninterrupted search.
ref_cfg, ref_run = config("ref")
rc = subprocess.call([args.ciq, "tune", "--config", ref_cfg, "--no-lock"], stdout=open(ref_run + ".log", "w"),
                     stderr=subprocess.STDOUT)
if rc != 0:
    sys.exit("the uninterrupted search failed (exit %d); see %s.log" % (rc, ref_run))

# The same search, killed at each kill point and resumed at once.
cfg, run = config("killed")
log = run + ".log"
open(log, "w").close()
survivors = 0
points = []
proc = run_ciq(["tune", "--config", cfg, "--no-lock"], log)
for k in range(args.kill_points):
    n = len(evaluations(run))
    if k % 2 == 0:
        what = "while a compile runs"
        ok = wait_for(lambda: compiling(run), proc)
    else:
        what = "right after an evaluation was recorded"
        ok = wait_for(lambda: len(evaluations(run)) > n, proc)
    if not ok:
        break  # the search ended before this kill point
    tokens = {tok for tok, _ in processes(run).values()}
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    points.append(what)
    proc = run_ciq(["resume", "--config", cfg, "--no-lock"], log)
    survivors += old_survivors(run, tokens, proc)
proc.wait()
if proc.returncode != 0:
    sys.exit("the last resume failed (exit %d); see %s" % (proc.returncode, log))

KEYS = ["generation", "point", "candidate_hash", "status", "reason", "scores", "device_code_sha256"]
ref = evaluations(ref_run)
got = evaluations(run)
ids = [e["candidate_id"] for e in got]
pts = [(e["generation"], json.dumps(e["point"])) for e in got]
ref_pts = {(e["generation"], json.dumps(e["point"])) for e in ref}
lost = len(ref_pts - set(pts))
repeated = (len(ids) - len(set(ids))) + (len(pts) - len(set(pts)))
changed = sum(1 for a, b in zip(ref, got) if {k: a.get(k) for k in KEYS} != {k: b.get(k) for k in KEYS})
changed += abs(len(ref) - len(got))


def winner(run_dir):
    w = [j for j in journal(run_dir) if j.get("op") == "winner"]
    return w[-1].get("candidate_id") if w else None


changed_winner = int(winner(ref_run) != winner(run))
print("kill points: %d (%d while a compile ran, %d right after an evaluation)" %
      (len(points), points.count("while a compile runs"), points.count("right after an evaluation was recorded")))
print("evaluations: %d uninterrupted, %d killed and resumed" % (len(ref), len(got)))
print("lost evaluations: %d" % lost)
print("repeated evaluations: %d" % repeated)
print("changed scores: %d" % changed)
print("changed winners: %d" % changed_winner)
print("surviving processes: %d" % survivors)

# Hanging compiles: the build timeout ends every process, and says so.
reported = left = objects_left = 0
trials = 0
obj = os.path.join(build, "CMakeFiles", "app.dir", "kern.cu.o")
for t in range(args.hang_trials):
    hcfg, hrun = config("hang%d" % t, "timeouts:\n  build_s: 5\n  compile_s: 600\n")
    open(os.path.join(work, "hang.flag"), "w").close()
    out = subprocess.run([args.ciq, "tune", "--config", hcfg, "--no-lock"], capture_output=True, text=True,
                         timeout=TIMEOUT)
    os.remove(os.path.join(work, "hang.flag"))
    trials += 1
    reported += int("ran past timeouts.build_s" in out.stdout + out.stderr)
    left += len(processes(hrun))  # at once: the setsid child included
    still_running(hang_pids)
    objects_left += int(os.path.exists(obj))
print("hang trials: %d, build timeouts reported: %d" % (trials, reported))
print("surviving processes after a build timeout: %d" % left)

# SIGTERM of ciq tune while a compile hangs: every compile ends, objects go.
tcfg, trun = config("term")
open(os.path.join(work, "hang.flag"), "w").close()
proc = run_ciq(["tune", "--config", tcfg, "--no-lock"], trun + ".log")
wait_for(lambda: any(c == "sleep" for _, c in processes(trun).values()), proc)
proc.send_signal(signal.SIGTERM)
proc.wait()
os.remove(os.path.join(work, "hang.flag"))
term_left = len(processes(trun))  # at once: ciq exits only after its processes are gone, setsid child included
still_running(hang_pids)
objects_left += int(os.path.exists(obj))
print("surviving processes after SIGTERM: %d" % term_left)
print("candidate objects left in the build tree: %d" % objects_left)

bad = lost + repeated + changed + changed_winner + survivors + left + term_left + objects_left + (trials - reported)
bad += build_kills(args.build_kill_trials)

# Issue 29: small exhaustive searches (c0000, c0001 with TILE=2, c0002 with
# TILE=8): each runs cicc, since a -D parameter reaches nvcc's front end.
SMALL = """objectives: [registers, spill_bytes]
search:
  strategy: exhaustive
  pool_size: 2
  generations: 1
  canary: false
space:
  controls:
    - name: tile
      define: TILE
      choice: [2, 8]
"""


def small_config(name, build_dir, extra=""):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write("target: app\nbuild_dir: %s\nlockfile: %s.lock\nrun_dir: run-%s\n" % (build_dir, name, name) +
                SMALL + extra)
    return path, os.path.join(work, "run-" + name)


def statuses(run_dir):
    return {e["candidate_id"]: (e.get("status"), e.get("reason") or "") for e in evaluations(run_dir)}


def message(run_dir, candidate):
    return "".join(e.get("message") or "" for e in evaluations(run_dir) if e["candidate_id"] == candidate)


# The real cicc or ptxas killed once during c0001's compile: call 2 of the
# tool (call 1 is the baseline's), so c0001 must be built once more and OK.
blamed = retried = 0
tools = []
if args.signal_trials:
    cuda = os.path.join(work, "killing-cuda")
    subprocess.check_call([sys.executable, os.path.join(INPUTS, "killing_cuda.py"), args.nvcc, cuda])
    sbuild = os.path.join(work, "build-signal")
    subprocess.check_call(["cmake", "-S", proj, "-B", sbuild, "-G", "Ninja", "-DCompileIQ_DIR=" + args.module_dir,
                           "-DCMAKE_CUDA_COMPILER=" + os.path.join(cuda, "bin", "nvcc")], stdout=subprocess.DEVNULL)
for t in range(args.signal_trials):
    tool = ("cicc", "ptxas")[t % 2]
    scfg, srun = small_config("signal%d" % t, "build-signal")
    state = os.path.join(work, "signal%d.calls" % t)
    os.makedirs(state)
    env = dict(os.environ, KILL_STATE_DIR=state, CIQ_PTX_REUSE="0", **{"KILL_%s_CALLS" % tool.upper(): "2"})
    out = subprocess.run([args.ciq, "tune", "--config", scfg, "--no-lock"], capture_output=True, text=True,
                         timeout=TIMEOUT, env=env)
    tools.append(tool)
    st = statuses(srun)
    blamed += sum(1 for s, _ in st.values() if s != "OK")
    retried += int("building it once more" in out.stdout + out.stderr and st.get("c0001", ("",))[0] == "OK")
print("compiler stages killed: %d (cicc %d, ptxas %d), built once more and OK: %d, blamed on the candidate: %d" %
      (len(tools), tools.count("cicc"), tools.count("ptxas"), retried, blamed))
bad += blamed + (len(tools) - retried)

# A compile (of TILE=8) that starts a setsid child and hangs past
# timeouts.compile_s; a benchmark whose helper keeps stdout open.
timeouts_reported = children_left = 0
runs_ok = helpers_left = 0
for t in range(args.setsid_trials):
    ccfg, crun = small_config("setsid%d" % t, "build", "timeouts:\n  compile_s: 60\n  build_s: 240\n")
    pids = os.path.join(work, "setsid%d.pids" % t)
    env = dict(os.environ, SETSID_CHILD_PIDS=pids)
    subprocess.run([args.ciq, "tune", "--config", ccfg, "--no-lock"], capture_output=True, timeout=TIMEOUT, env=env)
    # compile_s, not build_s: a child the compile timeout misses kept the compile's output open.
    timeouts_reported += int(statuses(crun).get("c0002") == ("INVALID", "compile_timeout") and
                             "ran past timeouts.compile_s" in message(crun, "c0002"))
    children_left += still_running(pids) + len(processes(crun))
    helpers = os.path.join(work, "helpers%d.pids" % t)
    shutil.copy(os.path.join(INPUTS, "helper_bench.py"), work)
    bcfg, brun = small_config("helper%d" % t, "build",
                              "benchmark:\n  command: [%s, helper_bench.py, %s]\n  working_dir: .\n  warmup: 0\n"
                              "  repeats: 1\n  finalists: 0\n  timeout_s: 20\n"
                              "  metric: {regex: 'time_ms=([0-9.]+)'}\n" % (sys.executable, helpers))
    subprocess.run([args.ciq, "tune", "--config", bcfg, "--no-lock"], capture_output=True, timeout=TIMEOUT)
    runs_ok += int(all(s == "OK" for s, _ in statuses(brun).values()) and len(statuses(brun)) == 3)
    helpers_left += still_running(helpers) + len(processes(brun))
print("setsid trials: %d, compile timeouts reported: %d, surviving setsid children: %d" %
      (args.setsid_trials, timeouts_reported, children_left))
print("benchmark helper trials: %d, runs ended with the benchmark: %d, surviving helpers: %d" %
      (args.setsid_trials, runs_ok, helpers_left))
bad += (args.setsid_trials - timeouts_reported) + children_left + (args.setsid_trials - runs_ok) + helpers_left
sys.exit(1 if bad else 0)
