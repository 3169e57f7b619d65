"""Starts `ciq tune --fresh --config CONFIG --no-lock` with SLOW_STEP_DIR set
(Inputs/slow-steps/Makefile's slow steps, each leaving a file there) and
SLOW_LINK_MARK (Inputs/slow_link.sh) naming a file in that folder, waits
until N files are there (every slow step runs), kills the engine with
SIGKILL, and prints which processes of its build (their environment names
the run directory) are still alive 1 s later, or "none" once all are gone.

Only processes this script started are ended afterwards: it is their
subreaper (PR_SET_CHILD_SUBREAPER), so what the killed engine left stays
below it, found by parent links in /proc, never by a name.

usage: kill_in_slow_steps.py <ciq> <config> <run dir> <marks dir> <N>"""
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
LIMIT_S = 1.0


def build_processes(run):
    """Names of the live processes whose CIQ_RUN_DIR is `run`."""
    names = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
            stat = open("/proc/%s/stat" % pid, "rb").read().rsplit(b")", 1)[1].split()
            # read now: a process may exit between here and the check below
            comm = open("/proc/%s/comm" % pid, errors="replace").read().strip()
        except (OSError, IndexError):
            continue
        dirs = [e[len(b"CIQ_RUN_DIR="):] for e in env if e.startswith(b"CIQ_RUN_DIR=")]
        if dirs and os.path.realpath(dirs[0]) == run.encode() and stat[0] not in (b"Z", b"X"):
            names.append(comm)
    return names


def descendants():
    parent = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            fields = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in ("Z", "X"):
            parent[int(p)] = int(fields[1])
    found, grew = set(), True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if pid not in found and (ppid == os.getpid() or ppid in found):
                found.add(pid)
                grew = True
    return found


def end_descendants(timeout_s=60):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        for pid in descendants():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            return
        time.sleep(0.01)
    sys.exit("processes this test started still run after %d s" % timeout_s)


ciq, cfg, marks, n = sys.argv[1], sys.argv[2], sys.argv[4], int(sys.argv[5])
run = os.path.realpath(sys.argv[3])
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER): %s" % os.strerror(ctypes.get_errno()))
os.makedirs(marks, exist_ok=True)
env = dict(os.environ, SLOW_STEP_DIR=marks, SLOW_LINK_MARK=os.path.join(marks, "link"))
log = open(os.path.join(marks, "..", "tune.log"), "w")
p = subprocess.Popen([ciq, "tune", "--fresh", "--config", cfg, "--no-lock"], stdout=log, stderr=subprocess.STDOUT,
                     env=env, start_new_session=True)
deadline = time.time() + 300
while len(os.listdir(marks)) < n:
    if p.poll() is not None or time.time() > deadline:
        end_descendants()
        sys.exit("the build ended before its %d slow steps ran (%s)" % (n, " ".join(sorted(os.listdir(marks)))))
    time.sleep(0.01)
time.sleep(0.1)  # past each step's mark, into its sleep
before = build_processes(run)
os.kill(p.pid, signal.SIGKILL)
p.wait()
killed = time.time()
left = build_processes(run)
while left and time.time() < killed + LIMIT_S:
    time.sleep(0.02)
    left = build_processes(run)
print("killed with %d slow steps running (%d build processes)" % (n, len(before)))
print("build processes left after %g s: %s" % (LIMIT_S, " ".join(sorted(left)) if left else "none"))
end_descendants()
