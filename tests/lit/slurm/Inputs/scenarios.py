"""Compile-only searches through the two-node test cluster (cluster.py),
compared with the same search on the local executor.

usage: scenarios.py <ciq> <work dir holding search.yaml and build/> same|faults|gpu|finalists

same:   the local search; then the Slurm search, its engine killed with
        SIGKILL while a job runs (`ciq resume` must reattach to that job, not
        submit it again), then `ciq stop` while a job runs (the job is
        cancelled), then `ciq resume` to the end. Same candidates, results and
        winner as the local search.
faults: one job at a time; the node running c0001 dies (its slurmd and the
        job's processes: SIGKILL): c0001 is requeued on the other node and
        scored. c0002's node dies, then the node of its requeued job: c0002 is
        INVALID (node_failure). The nodes come back and c0003 runs; the
        search ends (never stalls), with the local search's candidates.
gpu:    each node's GPU (gres gpu:1) is not there for nvidia-smi: the
        baseline's job is requeued once on the other node, then the baseline
        is INVALID (gpu_lost) and the search stops with that reason.
finalists: a runtime search (finalists.yaml, on the stand-in benchmark):
        its finalists are re-measured interleaved by one Slurm job, and the
        significantly faster candidate gets the lock; its engine is killed
        with SIGKILL while that job runs, and `ciq resume` reattaches to it.
        `ciq stop` while that job runs cancels it; `ciq resume` measures again. Then the same search
        whose finalists' job loses its node twice (requeued once, like an
        evaluation): no lock, and the reason. And one whose benchmark fails
        once its finalists' job is submitted: no lock, and the reason.
Prints one line per check, for FileCheck.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import Cluster  # noqa: E402

ciq, work, scenario = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
TIMEOUT = 300
SLURM = """executor: slurm
slurm:
  max_jobs: %d
  time_limit_min: 10
  workspace: shared
  poll_s: 0.1
run_dir: run-%s
"""


def config(name, slurm_jobs=0, extra="", base="search.yaml"):
    text = open(os.path.join(work, base)).read() + extra
    text += SLURM % (slurm_jobs, name) if slurm_jobs else "run_dir: run-%s\n" % name
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path, os.path.join(work, "run-" + name)


def journal(run_dir):
    out = []
    try:
        for line in open(os.path.join(run_dir, "journal.jsonl")):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    except FileNotFoundError:
        pass
    return out


def evaluations(run_dir):
    return [j for j in journal(run_dir) if j.get("op") == "evaluation"]


def winner(run_dir):
    w = [j for j in journal(run_dir) if j.get("op") == "winner"]
    return w[-1]["candidate_id"] if w else None


def comparable(e):
    return (e["candidate_id"], e["candidate_hash"], e["status"], e["reason"], e["device_code_sha256"],
            json.dumps(e["scores"], sort_keys=True), e["duplicate_of"], e["duplicate_kind"])


def jobs_table(run_dir):
    try:
        return json.load(open(os.path.join(run_dir, "slurm", "jobs.json")))
    except (OSError, ValueError):
        return {}


def wait_for(what, cond, proc=None, timeout=TIMEOUT):
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v:
            return v
        if proc is not None and proc.poll() is not None:
            sys.exit("the engine ended (exit %s) before %s" % (proc.returncode, what))
        if time.time() > deadline:
            if proc is not None:
                proc.kill()
            sys.exit("timed out waiting for " + what)
        time.sleep(0.1)


def job_state(cluster, job_id):
    out = cluster.run(["squeue", "-h", "--states=all", "-j", str(job_id), "-o", "%T|%N"]).stdout.strip()
    return out.split("|") if out else ["", ""]


def running_job(cluster, run_dir, candidate=None, attempt=None):
    """(candidate id, job id, node) of a job of the table that runs now."""
    for cid, j in sorted(jobs_table(run_dir).items()):
        if candidate and cid != candidate or attempt and j.get("attempt") != attempt:
            continue
        state, node = job_state(cluster, j["job_id"])
        if state == "RUNNING" and node:
            return cid, j["job_id"], node
    return None


def run(cluster, args, log, env=None):
    with open(log, "a") as out:
        return subprocess.Popen([ciq] + args, cwd=work, env=dict(cluster.env(), **(env or {})), stdout=out,
                                stderr=subprocess.STDOUT)


class Hold:
    """The jobs of a search run with HOLD_DIR=<dir> wait in their build until
    let go (Inputs/held_ninja.sh, the build tree's make program)."""

    def __init__(self, name):
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)

    def let_go(self, job_id):
        open(os.path.join(self.dir, "%s.go" % job_id), "w").close()

    def let_all_go(self):
        open(os.path.join(self.dir, "all.go"), "w").close()

    def is_waiting(self, job):
        return os.path.exists(os.path.join(self.dir, "%s.waiting" % job["job_id"]))

    def pick(self, cluster, run_dir, wanted, released):
        """(candidate, job id, node) of a job that waits in the hold, runs and
        is wanted(cid, job); the waiting jobs released(cid, job) are let go."""
        for cid, j in sorted(jobs_table(run_dir).items()):
            if not self.is_waiting(j):
                continue
            if released(cid, j):
                self.let_go(j["job_id"])
            elif wanted(cid, j):
                state, node = job_state(cluster, j["job_id"])
                if state == "RUNNING" and node:
                    return cid, j["job_id"], node
        return None

    def waiting(self, cluster, run_dir, candidate, attempt):
        """That attempt of candidate's job; other candidates' jobs are let go
        (an earlier attempt of this one, its node killed, stays)."""
        return self.pick(cluster, run_dir, lambda c, j: c == candidate and j.get("attempt") == attempt,
                         lambda c, j: c != candidate)

    def any_waiting(self, cluster, run_dir, but=None):
        """Any job but those of candidate `but`, which are let go."""
        return self.pick(cluster, run_dir, lambda c, j: True, lambda c, j: c == but)

    def let_waiting_go(self, run_dir, but_job=None):
        for j in jobs_table(run_dir).values():
            if j["job_id"] != but_job and self.is_waiting(j):
                self.let_go(j["job_id"])


def finish(proc, what):
    try:
        rc = proc.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        sys.exit("timed out: " + what)
    return rc


def same(cluster):
    local, local_run = config("local")
    # cluster.env() here too: the fixture ends the runs of its test when it stops.
    rc = subprocess.run([ciq, "tune", "--no-lock", "--quiet", "--config", local], cwd=work, env=cluster.env(),
                        stdout=subprocess.DEVNULL).returncode
    print("local search: exit %d, %d evaluations" % (rc, len(evaluations(local_run))))

    slurm, slurm_run = config("slurm", slurm_jobs=2)
    log = os.path.join(work, "slurm.log")
    # Each job waits in its build until let go: the kill and the stop below
    # surely land while a job runs, whatever the load.
    hold = Hold("hold-slurm")
    held = {"HOLD_DIR": hold.dir}
    # kill -9 of the engine while one of its jobs runs.
    p = run(cluster, ["tune", "--no-lock", "--config", slurm], log, held)
    cid, job, _ = wait_for("a running job", lambda: hold.any_waiting(cluster, slurm_run), p)
    p.send_signal(signal.SIGKILL)
    p.wait()
    print("kill -9 of the engine while %s runs: %d evaluations in the journal, job still %s" %
          ("its job", len(evaluations(slurm_run)), job_state(cluster, job)[0]))

    # `ciq resume` reattaches; `ciq stop` while a later job runs cancels it.
    p = run(cluster, ["resume", "--no-lock", "--config", slurm], log, held)
    hold.let_go(job)

    def read_back():
        hold.let_waiting_go(slurm_run)
        return any(e["candidate_id"] == cid for e in evaluations(slurm_run))
    wait_for("the killed engine's job to be read back", read_back, p)
    reattached = [e for e in evaluations(slurm_run) if e["candidate_id"] == cid][0]
    print("resume: %s read back from the job submitted before the kill: %s" %
          (cid, reattached.get("slurm", {}).get("job_id") == job))
    cid2, job2, _ = wait_for("a running job after the resume", lambda: hold.any_waiting(cluster, slurm_run, cid), p)
    stop = subprocess.run([ciq, "stop", "--config", slurm], cwd=work, env=cluster.env(),
                          stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    # Any other job goes on (the stop cancels what runs or ends it), job2 waits.
    hold.let_waiting_go(slurm_run, job2)
    rc = finish(p, "ciq stop")
    state = wait_for("the cancelled job to end",
                     lambda: job_state(cluster, job2)[0] if job_state(cluster, job2)[0] not in
                     ("RUNNING", "PENDING", "COMPLETING") else None)
    print("ciq stop while %s runs: stop exit %d, engine exit %d, its job %s" %
          ("a job", stop.returncode, rc, state))
    hold.let_all_go()

    p = run(cluster, ["resume", "--no-lock", "--config", slurm], log)
    rc = finish(p, "the last resume")
    a, b = evaluations(local_run), evaluations(slurm_run)
    print("slurm search: exit %d, %d evaluations" % (rc, len(b)))
    print("evaluations: %s" % ("identical" if list(map(comparable, a)) == list(map(comparable, b)) else
                                "DIFFERENT\n%s\n%s" % (list(map(comparable, a)), list(map(comparable, b)))))
    print("winner: %s local, %s slurm" % (winner(local_run), winner(slurm_run)))
    nodes = sorted(set(e.get("node", "") for e in b if e.get("slurm")))
    print("nodes used: %s" % " ".join(nodes))
    print("every record read back from a job: %s" %
          all(e.get("slurm", {}).get("read_at") for e in b if not e["duplicate_kind"] == "config"))


def one_generation(path):
    text = open(path).read().replace("max_evaluations: 7", "max_evaluations: 4").replace(
        "generations: 2", "generations: 1")
    with open(path, "w") as f:
        f.write(text)


def faults(cluster):
    # Generation 1 only: its candidates do not depend on results, so an
    # INVALID one leaves the rest as the local search has them.
    local, local_run = config("local")
    one_generation(local)
    subprocess.run([ciq, "tune", "--no-lock", "--quiet", "--config", local], cwd=work, env=cluster.env(),
                   stdout=subprocess.DEVNULL)
    slurm, slurm_run = config("faults", slurm_jobs=1)
    one_generation(slurm)
    # Each job waits in its build until let go or its node is killed: a node
    # killed by this script dies while the job runs, whatever the load.
    hold = Hold("hold-faults")
    p = run(cluster, ["tune", "--no-lock", "--config", slurm], os.path.join(work, "faults.log"),
            {"HOLD_DIR": hold.dir})

    # c0001: its node dies once; the requeued job runs on the other node.
    _, job, node = wait_for("c0001 running", lambda: hold.waiting(cluster, slurm_run, "c0001", 1), p)
    cluster.kill_node(node, [job])
    _, job2, node2 = wait_for("c0001 requeued and running", lambda: hold.waiting(cluster, slurm_run, "c0001", 2), p)
    print("c0001: node %s killed, requeued on %s" % ("the other" if node2 != node else "THE SAME", "another node"))
    cluster.start_node(node)  # back in service once it registers (ReturnToService=2)
    hold.let_go(job2)

    # c0002: its node dies, then the node of the requeued job.
    _, job, node = wait_for("c0002 running", lambda: hold.waiting(cluster, slurm_run, "c0002", 1), p)
    cluster.kill_node(node, [job])
    _, job, node2 = wait_for("c0002 requeued and running", lambda: hold.waiting(cluster, slurm_run, "c0002", 2), p)
    cluster.kill_node(node2, [job])
    hold.let_all_go()
    # The generation's results are journaled together, after c0003, which
    # needs a node: c0002 is given up once the engine submits c0003.
    wait_for("c0002 given up", lambda: "c0002" not in jobs_table(slurm_run) and "c0003" in jobs_table(slurm_run), p)
    for n in (node, node2):
        cluster.start_node(n)
    rc = finish(p, "the fault search")
    ev = {e["candidate_id"]: e for e in evaluations(slurm_run)}
    c1, c2 = ev["c0001"], ev["c0002"]
    print("c0001: %s, attempt %s, requeued after: %s" % (c1["status"], c1["slurm"]["attempt"],
                                                       c1["slurm"].get("requeued_after", "").split(" on ")[0]))
    print("c0002: %s %s: %s" % (c2["status"], c2["reason"], c2["message"]))
    print("fault search: exit %d, %d evaluations, c0003 %s" % (rc, len(ev), ev.get("c0003", {}).get("status")))
    same_ids = [(e["candidate_id"], e["candidate_hash"]) for e in evaluations(local_run)] == \
        [(e["candidate_id"], e["candidate_hash"]) for e in evaluations(slurm_run)]
    print("candidates: %s as the local search" % ("the same" if same_ids else "NOT the same"))


def gpu(cluster):
    slurm, slurm_run = config("gpu", slurm_jobs=1, extra=GPU_BENCHMARK)
    text = open(slurm).read().replace("  max_jobs:", "  gres: gpu:1\n  max_jobs:")
    with open(slurm, "w") as f:
        f.write(text)
    p = run(cluster, ["tune", "--no-lock", "--config", slurm], os.path.join(work, "gpu.log"))
    rc = finish(p, "the search on nodes without their GPU")
    print("search: exit %d" % rc)
    for e in evaluations(slurm_run):
        print("%s: %s %s: %s" % (e["candidate_id"], e["status"], e["reason"], e["message"]))
    print(open(os.path.join(work, "gpu.log")).read().strip().splitlines()[-1])


def finalists_row(run_dir):
    rows = [j for j in journal(run_dir) if j.get("op") == "finalists"]
    return rows[-1] if rows else {}


def finalists_worker(run_dir, attempt):
    """The finalists' job's `ciq worker` runs (not just its job: a node
    killed before the job's step started the worker could leave the worker
    to be started, orphaned, and finish)."""
    want = ("%s/slurm/finalists.%d.result.json" % (run_dir, attempt)).encode()
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and want in open("/proc/%s/cmdline" % p, "rb").read().split(b"\0"):
                return True
        except OSError:
            pass
    return False


def finalists(cluster):
    cfg, run_dir = config("fin", slurm_jobs=2, extra="lockfile: fin.lock\n", base="finalists.yaml")
    log = os.path.join(work, "fin.log")
    # kill -9 of the engine while the finalists' job runs; `ciq resume` reattaches to that job.
    p = run(cluster, ["tune", "--config", cfg], log)
    _, job, _ = wait_for("the finalists' job running", lambda: running_job(cluster, run_dir, "finalists", 1), p)
    p.send_signal(signal.SIGKILL)
    p.wait()
    rc = finish(run(cluster, ["resume", "--config", cfg], log), "the resumed runtime search")
    row = finalists_row(run_dir)
    print("resume after kill -9 during the finalists' job: read back from that job: %s" %
          (row.get("slurm", {}).get("job_id") == job))
    print("runtime search: exit %d, lock written: %s" % (rc, os.path.exists(os.path.join(work, "fin.lock"))))
    print("finalists row: %s, measured on %s by job %s" %
          (" ".join("%s:%d" % (r["candidate_id"], len(r["values"])) for r in row.get("rows", [])),
           row.get("node"), row.get("slurm", {}).get("job_id")))
    medians = [r["median"] for r in row.get("rows", [])]
    print("finalist faster than the baseline by about 1 ms: %s" %
          (len(medians) == 2 and 0.9 < medians[0] - medians[1] < 1.1))
    lock = json.load(open(os.path.join(work, "fin.lock"))) if os.path.exists(os.path.join(work, "fin.lock")) else {}
    lock = next(iter(lock["architectures"].values())) if lock.get("schema_version", 1) >= 2 else lock  # the one section of this GPU
    m = lock.get("score", {}).get("finalists_measurement", {})
    print("lock: winner %s, finalists measured in %s phase(s) on the node of the row: %s" %
          (lock.get("winner", {}).get("candidate_id"), m.get("phases"), m.get("node") == row.get("node")))

    # `ciq stop` while the finalists' job runs cancels it; `ciq resume` measures the finalists again.
    cfg, run_dir = config("finstop", slurm_jobs=2, extra="lockfile: finstop.lock\n", base="finalists.yaml")
    log = os.path.join(work, "finstop.log")
    p = run(cluster, ["tune", "--config", cfg], log)
    _, job, _ = wait_for("the finalists' job running", lambda: running_job(cluster, run_dir, "finalists", 1), p)
    stop = subprocess.run([ciq, "stop", "--config", cfg], cwd=work, env=cluster.env(), stdout=subprocess.DEVNULL,
                          stderr=subprocess.STDOUT)
    rc = finish(p, "ciq stop during the finalists")
    state = wait_for("the cancelled job to end",
                     lambda: job_state(cluster, job)[0] if job_state(cluster, job)[0] not in
                     ("RUNNING", "PENDING", "COMPLETING") else None)
    print("ciq stop while the finalists' job runs: stop exit %d, engine exit %d, its job %s, lock written: %s" %
          (stop.returncode, rc, state, os.path.exists(os.path.join(work, "finstop.lock"))))
    rc = finish(run(cluster, ["resume", "--config", cfg], log), "the resume after ciq stop")
    print("resume: exit %d, lock written: %s, finalists measured by a new job: %s" %
          (rc, os.path.exists(os.path.join(work, "finstop.lock")),
           finalists_row(run_dir).get("slurm", {}).get("job_id") not in (None, job)))

    # The finalists' job loses its node, then its requeued job loses its node too.
    cfg, run_dir = config("finfault", slurm_jobs=2, extra="lockfile: finfault.lock\n", base="finalists.yaml")
    p = run(cluster, ["tune", "--config", cfg], os.path.join(work, "finfault.log"))
    _, job, node = wait_for("the finalists' job running", lambda: running_job(cluster, run_dir, "finalists", 1), p)
    wait_for("the finalists' worker running", lambda: finalists_worker(run_dir, 1), p)
    cluster.kill_node(node, [job])
    _, job, node2 = wait_for("the finalists' job requeued and running",
                             lambda: running_job(cluster, run_dir, "finalists", 2), p)
    wait_for("the requeued finalists' worker running", lambda: finalists_worker(run_dir, 2), p)
    print("finalists' job: node %s killed, requeued on %s" % ("the other" if node2 != node else "THE SAME",
                                                              "another node"))
    cluster.kill_node(node2, [job])
    rc = finish(p, "the runtime search whose finalists' job failed")
    for n in (node, node2):
        cluster.start_node(n)
    row = finalists_row(run_dir)
    print("fault search: exit %d, lock written: %s" % (rc, os.path.exists(os.path.join(work, "finfault.lock"))))
    print("finalists row: %s: %s" % (row.get("reason"), row.get("message")))
    print([l for l in open(os.path.join(work, "finfault.log")).read().splitlines() if "no lock" in l][-1].strip())

    # The benchmark fails from the moment the finalists' job is submitted
    # (the search's runs are over by then): the job's own failure, not its node's.
    marker = os.path.join(work, "benchmark-broken")
    # ./app is an argument, so each finalist runs its own build's copy.
    gate = "import os, sys; os.path.exists(%r) and sys.exit('the benchmark broke'); os.execvp(sys.argv[1], [sys.argv[1], 'runs.txt'])"
    cfg, run_dir = config("finbench", slurm_jobs=2, extra="lockfile: finbench.lock\n", base="finalists.yaml")
    text = open(cfg).read().replace("command: [./app, runs.txt]", "command: [python3, -c, %s, ./app]" % json.dumps(gate % marker))
    with open(cfg, "w") as f:
        f.write(text)
    p = run(cluster, ["tune", "--config", cfg], os.path.join(work, "finbench.log"))
    wait_for("the finalists' job submitted", lambda: "finalists" in jobs_table(run_dir), p)
    open(marker, "w").close()
    rc = finish(p, "the runtime search whose benchmark broke")
    row = finalists_row(run_dir)
    print("broken benchmark: exit %d, lock written: %s" % (rc, os.path.exists(os.path.join(work, "finbench.lock"))))
    print("finalists row: %s: %s, on %s" % (row.get("reason"), row.get("message"), row.get("node")))


# A runtime objective: its jobs ask for a GPU (gres gpu:1).
GPU_BENCHMARK = """benchmark:
  command: [python3, -c, "print('time_ms=1')"]
  metric: {regex: 'time_ms=([0-9.]+)'}
  finalists: 0
"""

with Cluster(os.path.join(work, "cluster"), fake_gpu=scenario == "gpu") as c:
    {"same": same, "faults": faults, "gpu": gpu, "finalists": finalists}[scenario](c)
