"""A real two-node Slurm cluster on this one host, for the slurm tests and
bench/slurm_throughput.py: munged on a private socket, one slurmctld and two
slurmd (`slurmd -N n1`, `slurmd -N n2`, both at 127.0.0.1, each on its own
port), configured by a slurm.conf generated under a temp dir. No systemd, no
cgroups: proctrack/linuxproc and task/none.

Everything started is stopped again by stop(), and only that: the daemons
by the pids of their pid files (checked to still be our daemon), the jobs'
processes and the test's own ciq processes by SLURM_CONF=<this slurm.conf>
in their environment. stop() runs when the `with` block ends (a test that
fails included), at exit, on SIGTERM, SIGINT and SIGHUP, and when the
fixture's own deadline passes (SIGALRM, `deadline_s`, below any CTest or lit
timeout, which would SIGKILL it with no chance to clean up).

A cluster left behind by an earlier run that was SIGKILLed cannot disturb
the next: every path (state, spool, pid files, munge socket and key) is under
the test's own temp dir, ports are taken free from the kernel, and start()
first ends the daemons of an earlier run of the same dir (its pid files, or,
when lit's `rm -rf %t` removed them, the daemons whose command line names
this dir). Two test runs at once do not collide.

Runs as root (CI does).

    with Cluster(tmpdir) as c:
        env = c.env()            # SLURM_CONF and friends, for sbatch/ciq
        c.kill_node("n1")        # node death: its slurmd and its jobs' processes
"""
import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

NODES = ["n1", "n2"]
DAEMONS = ("munged", "slurmctld", "slurmd")
# A whole scenario (local search, Slurm search, faults) on a loaded 2-core
# host takes a few minutes; past this the fixture stops everything itself.
DEFAULT_DEADLINE_S = int(os.environ.get("CIQ_TEST_CLUSTER_DEADLINE_S", "900"))


def cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def end(pid, grace_s=5.0):
    """SIGTERM, then SIGKILL after grace_s; waits until it is gone."""
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.time() + grace_s
    while alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    if alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def which(name):
    for d in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]:
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    p = shutil.which(name)
    if not p:
        raise SystemExit("cluster.py: %s is not installed (make deps installs slurmctld, slurmd, "
                         "slurm-client and munge)" % name)
    return p


class Cluster:
    def __init__(self, root, cpus_per_node=1, slurmd_timeout_s=4, fake_gpu=False, deadline_s=DEFAULT_DEADLINE_S):
        self.root = os.path.abspath(root)
        self.deadline_s = deadline_s
        self._stopping = False
        self._old_handlers = {}
        # fake_gpu: each node declares one GPU (gres gpu:1 backed by /dev/null),
        # which nvidia-smi cannot see: a node whose GPU vanished.
        self.fake_gpu = fake_gpu
        self.cpus = cpus_per_node
        self.slurmd_timeout = slurmd_timeout_s
        self.procs = {}   # name -> pid of a daemon we started (from its pid file)
        self.conf = os.path.join(self.root, "slurm.conf")
        self.munge_socket = os.path.join(self.root, "munge", "s")   # must fit in sun_path

    # --- set-up -------------------------------------------------------
    def _write_conf(self):
        r = self.root
        for d in ["state", "log", "run"] + ["spool/" + n for n in NODES]:
            os.makedirs(os.path.join(r, d), exist_ok=True)
        ctld_port = free_port()
        lines = [
            "ClusterName=ciqtest",
            "SlurmctldHost=localhost(127.0.0.1)",
            "SlurmctldPort=%d" % ctld_port,
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            "AuthInfo=socket=%s" % self.munge_socket,
            "StateSaveLocation=%s/state" % r,
            "SlurmdSpoolDir=%s/spool/%%n" % r,
            "SlurmctldPidFile=%s/run/slurmctld.pid" % r,
            "SlurmdPidFile=%s/run/slurmd.%%n.pid" % r,
            "SlurmctldLogFile=%s/log/slurmctld.log" % r,
            "SlurmdLogFile=%s/log/slurmd.%%n.log" % r,
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SwitchType=switch/none",
            "MpiDefault=none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            # Node death is noticed in seconds, not the default five minutes.
            "SlurmdTimeout=%d" % self.slurmd_timeout,
            "SlurmctldTimeout=10",
            "MessageTimeout=5",
            "InactiveLimit=0",
            "KillWait=2",
            "MinJobAge=600",
            "ReconfigFlags=KeepPartState",
            "SchedulerParameters=sched_interval=1",
        ]
        gres = ""
        if self.fake_gpu:
            lines.append("GresTypes=gpu")
            gres = " Gres=gpu:1"
            with open(os.path.join(r, "gres.conf"), "w") as f:
                f.write("Name=gpu File=/dev/null\n")
        for n in NODES:
            lines.append("NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=%d "
                         "RealMemory=1000 State=UNKNOWN%s" % (n, free_port(), self.cpus, gres))
        lines.append("PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP" % ",".join(NODES))
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _start_munge(self):
        key = os.path.join(self.root, "munge", "munge.key")
        os.makedirs(os.path.dirname(key), mode=0o700, exist_ok=True)
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        d = os.path.join(self.root, "munge")
        subprocess.run([which("munged"), "--force", "--socket=" + self.munge_socket, "--key-file=" + key,
                        "--pid-file=" + d + "/munged.pid", "--log-file=" + d + "/munged.log",
                        "--seed-file=" + d + "/munged.seed"], check=True)
        self.procs["munged"] = self._wait_pidfile(d + "/munged.pid", "munged")

    def _daemon(self, name, argv, pidfile):
        subprocess.run(argv, check=True, env=self.env(), timeout=60)
        self.procs[name] = self._wait_pidfile(pidfile, name)

    def _wait_pidfile(self, path, name):
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                pid = int(open(path).read().strip())
                if self._our_daemon(pid, name):
                    return pid
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise SystemExit("cluster.py: no %s wrote %s; logs in %s/log" % (name, path, self.root))

    def _our_daemon(self, pid, name):
        """pid is a daemon of this cluster (a pid file's pid may have been
        reused by another process since)."""
        argv = cmdline(pid)
        if not argv or os.path.basename(argv[0].decode(errors="replace")).split(":")[0] != name.split("-")[0]:
            return False
        return any((self.root + "/").encode() in a for a in argv)

    def _end_leftovers(self):
        """Daemons of an earlier run of this dir that was killed before it
        could stop them: by its pid files where they are still there, else
        by a command line that names this dir; then its jobs' processes."""
        pids = set()
        for d in ("run", "munge"):
            folder = os.path.join(self.root, d)
            for f in os.listdir(folder) if os.path.isdir(folder) else []:
                if f.endswith(".pid"):
                    try:
                        pids.add(int(open(os.path.join(folder, f)).read().strip()))
                    except (OSError, ValueError):
                        pass
        for p in os.listdir("/proc"):
            if p.isdigit():
                pids.add(int(p))
        for pid in sorted(pids):
            if pid != os.getpid() and any(self._our_daemon(pid, n) for n in DAEMONS):
                sys.stderr.write("cluster.py: ending %s (pid %d), left running by an earlier run in %s\n" %
                                 (os.path.basename(cmdline(pid)[0].decode(errors="replace")), pid, self.root))
                end(pid)
        # Jobs' processes of that run (slurmstepd, ciq worker) outlive their daemons.
        kids = self._children()
        for pid in self._processes_of_this_cluster():
            for v in self._tree(pid, kids):
                try:
                    os.kill(v, signal.SIGKILL)
                except OSError:
                    pass

    def start(self):
        self._install_cleanup()
        self._end_leftovers()
        # Nothing of an earlier run's state (job ids, node states, spool) is read.
        for d in ("state", "spool", "run", "munge"):
            shutil.rmtree(os.path.join(self.root, d), ignore_errors=True)
        os.makedirs(self.root, exist_ok=True)
        self._start_munge()
        self._write_conf()
        self._daemon("slurmctld", [which("slurmctld"), "-f", self.conf, "-i"], self.root + "/run/slurmctld.pid")
        for n in NODES:
            self.start_node(n)
        self.wait_idle(NODES)
        return self

    def start_node(self, node):
        pidfile = "%s/run/slurmd.%s.pid" % (self.root, node)
        if os.path.exists(pidfile):
            os.unlink(pidfile)
        self._daemon("slurmd-" + node, [which("slurmd"), "-f", self.conf, "-N", node], pidfile)

    def env(self):
        e = dict(os.environ)
        e["SLURM_CONF"] = self.conf
        return e

    def run(self, argv, timeout=60):
        try:
            return subprocess.run(argv, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            # slurmctld not answering: no output, as a failed command.
            return subprocess.CompletedProcess(argv, 124, "")

    def node_states(self):
        out = self.run(["sinfo", "-h", "-N", "-o", "%N %t"]).stdout.split()
        return dict(zip(out[0::2], out[1::2]))

    def wait_idle(self, nodes, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            s = self.node_states()
            if all(s.get(n, "").startswith("idle") or s.get(n, "").startswith("mix") or
                   s.get(n, "").startswith("alloc") for n in nodes):
                return
            # A node left DOWN by an earlier kill comes back once it answers.
            for n in nodes:
                if s.get(n, "").startswith("down") and not s.get(n, "").endswith("*"):
                    self.run(["scontrol", "update", "NodeName=" + n, "State=RESUME"])
            time.sleep(0.3)
        raise SystemExit("cluster.py: nodes %s not idle after %ds: %s; logs in %s/log" %
                         (nodes, timeout, self.node_states(), self.root))

    # --- faults -------------------------------------------------------
    def _children(self):
        kids = {}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    ppid = int(open("/proc/%s/stat" % pid, errors="replace").read().rsplit(")", 1)[1].split()[1])
                    kids.setdefault(ppid, []).append(int(pid))
                except (OSError, IndexError, ValueError):
                    pass
        return kids

    def _tree(self, pid, kids):
        out = [pid]
        for k in kids.get(pid, []):
            out += self._tree(k, kids)
        return out

    def jobs_on(self, node):
        out = self.run(["squeue", "-h", "-w", node, "-t", "RUNNING", "-o", "%i"]).stdout.split()
        return [int(j) for j in out]

    def _ours(self, pid):
        """A process of this cluster (another test's cluster may run at once,
        with the same small job ids)."""
        try:
            env = open("/proc/%s/environ" % pid, "rb").read()
        except OSError:
            return False
        return (b"SLURM_CONF=" + self.conf.encode()) in env.split(b"\0")

    def kill_node(self, node, jobs=()):
        """The node dies: its slurmd and every process of the jobs it runs
        (their slurmstepd and what it started) are killed with SIGKILL."""
        jobs = set(str(j) for j in list(jobs) + self.jobs_on(node))
        kids = self._children()
        victims = []
        pid = self.procs.pop("slurmd-" + node, None)
        if pid:
            victims.append(pid)
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                cmd = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if cmd.startswith("slurmstepd:") and any("[%s." % j in cmd for j in jobs) and self._ours(p):
                victims += self._tree(int(p), kids)
        for v in victims:
            try:
                os.kill(v, signal.SIGKILL)
            except OSError:
                pass
        return sorted(jobs)

    # --- tear-down ----------------------------------------------------
    def _install_cleanup(self):
        """stop() at exit, on SIGTERM/SIGINT/SIGHUP and at the deadline:
        the daemons are not our children (they daemonize), so nothing else
        would end them."""
        atexit.register(self.stop)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
            self._old_handlers[sig] = signal.signal(sig, self._on_signal)
        if self.deadline_s:
            signal.alarm(self.deadline_s)

    def _on_signal(self, sig, frame):
        if self._stopping:
            return  # the stop under way finishes first
        if sig == signal.SIGALRM:
            sys.stderr.write("cluster.py: the test ran past its deadline of %d s (CIQ_TEST_CLUSTER_DEADLINE_S); "
                             "stopping the cluster; logs in %s/log\n" % (self.deadline_s, self.root))
            self.stop()
            os._exit(124)
        self.stop()
        # Then die of the signal as if it had not been caught.
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    def _processes_of_this_cluster(self):
        """Jobs' processes (slurmstepd and what it started) and the test's own
        ciq runs: their environment names this cluster's slurm.conf."""
        mine = (b"SLURM_CONF=" + self.conf.encode())
        out = []
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % p, "rb") as f:
                    if mine in f.read().split(b"\0"):
                        out.append(int(p))
            except OSError:
                pass
        return out

    def stop(self):
        if self._stopping:
            return
        self._stopping = True
        signal.alarm(0)
        # Jobs first (their processes are ours too), then the daemons.
        if "slurmctld" in self.procs:
            self.run(["scancel", "--full", "-u", "root"], timeout=10)
        kids = self._children()
        victims = []
        for pid in self._processes_of_this_cluster():
            if not any(self._our_daemon(pid, n) for n in DAEMONS):
                victims += self._tree(pid, kids)
        for v in victims:
            try:
                os.kill(v, signal.SIGKILL)
            except OSError:
                pass
        # slurmd before slurmctld before munged: each still reaches the next while it ends.
        order = sorted(self.procs, key=lambda n: {"slurmctld": 1, "munged": 2}.get(n, 0))
        for name in order:
            pid = self.procs.pop(name)
            if self._our_daemon(pid, name):
                end(pid)
        for sig, h in self._old_handlers.items():
            try:
                signal.signal(sig, h)
            except (ValueError, TypeError):
                pass
        self._old_handlers = {}
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass
        self._stopping = False

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()
        return False


if __name__ == "__main__":
    # Manual check: python3 cluster.py DIR  starts a cluster, runs one job on each node, stops.
    import sys
    with Cluster(sys.argv[1]) as c:
        print(c.node_states())
        r = c.run(["srun", "-N", "2", "hostname"])
        print(r.stdout)
