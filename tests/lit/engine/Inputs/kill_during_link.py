"""Starts `ciq tune --config CONFIG --no-lock` with SLOW_LINK_MARK set (the
linker launcher Inputs/slow_link.sh waits at the first link), waits until a
link of the baseline's build waits there (its CUDA object compiled and
receipted), and kills the engine with SIGKILL, then what it left running
(the waiting link, its ninja or make), as a user's kill -9 and a Ctrl-C of
what is left would.

Only processes this script started are killed: it is their subreaper
(PR_SET_CHILD_SUBREAPER), so what the killed engine started stays below it,
found by parent links in /proc, never by a name or pattern (another test
suite running at once has processes of the same names).

usage: kill_during_link.py <ciq> <config> <mark file>"""
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def descendants():
    """Every live process below this one."""
    parent = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
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
    """SIGKILL to every descendant, again until none is left and all are reaped."""
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
            return  # no child left: nothing below this process
        time.sleep(0.01)
    sys.exit("processes this test started still run after %d s" % timeout_s)


ciq, cfg, mark = sys.argv[1], sys.argv[2], sys.argv[3]
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER): %s" % os.strerror(ctypes.get_errno()))
env = dict(os.environ, SLOW_LINK_MARK=mark)
p = subprocess.Popen([ciq, "tune", "--fresh", "--config", cfg, "--no-lock"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, env=env, start_new_session=True)
deadline = time.time() + 300
while not os.path.exists(mark):
    if p.poll() is not None or time.time() > deadline:
        sys.exit("the search ended before a link")
    time.sleep(0.01)
os.kill(p.pid, signal.SIGKILL)
p.wait()
end_descendants()
print("killed during a link")
