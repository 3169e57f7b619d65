"""A real two-node Slurm cluster on this one host, for the slurm tests and
bench/slurm_throughput.py: munged on a private socket, one slurmctld and two
slurmd (`slurmd -N n1`, `slurmd -N n2`, both at 127.0.0.1, each on its own
port), configured by a slurm.conf generated under a temp dir. No systemd, no
cgroups: proctrack/linuxproc and task/none. Everything started is stopped
again by stop() (also when a test fails: use it as a context manager).

Runs as root (CI does). Ports are taken free from the kernel, so two test
runs at once do not collide.

    with Cluster(tmpdir) as c:
        env = c.env()            # SLURM_CONF and friends, for sbatch/ciq
        c.kill_node("n1")        # node death: its slurmd and its jobs' processes
"""
import os
import shutil
import signal
import socket
import subprocess
import time

NODES = ["n1", "n2"]


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
    def __init__(self, root, cpus_per_node=1, slurmd_timeout_s=4, fake_gpu=False):
        self.root = os.path.abspath(root)
        # fake_gpu: each node declares one GPU (gres gpu:1 backed by /dev/null),
        # which nvidia-smi cannot see: a node whose GPU vanished.
        self.fake_gpu = fake_gpu
        self.cpus = cpus_per_node
        self.slurmd_timeout = slurmd_timeout_s
        self.procs = {}   # name -> pid of a daemon we started
        self.conf = os.path.join(self.root, "slurm.conf")

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
        self.procs["munged"] = int(open(d + "/munged.pid").read())

    def _daemon(self, name, argv, pidfile):
        subprocess.run(argv, check=True, env=self.env())
        self.procs[name] = self._wait_pidfile(pidfile)

    def _wait_pidfile(self, path):
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                pid = int(open(path).read().strip())
                os.kill(pid, 0)
                return pid
            except (OSError, ValueError):
                time.sleep(0.1)
        raise SystemExit("cluster.py: no daemon wrote " + path + "; logs in " + self.root + "/log")

    def start(self):
        os.makedirs(self.root, exist_ok=True)
        # munged's socket path must fit in sun_path.
        self.munge_socket = os.path.join(self.root, "munge", "s")
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

    def run(self, argv):
        return subprocess.run(argv, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)

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
                    ppid = int(open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[1])
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
                cmd = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode()
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
    def stop(self):
        # Jobs first (their processes are ours too), then the daemons.
        if "slurmctld" in self.procs:
            self.run(["scancel", "--full", "-u", "root"])
        kids = self._children()
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                cmd = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if cmd.startswith("slurmstepd:") and self._ours(p):
                for v in self._tree(int(p), kids):
                    try:
                        os.kill(v, signal.SIGKILL)
                    except OSError:
                        pass
        for name in list(self.procs):
            pid = self.procs.pop(name)
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                continue
            for _ in range(50):
                try:
                    os.kill(pid, 0)
                    time.sleep(0.1)
                except OSError:
                    break
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

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
