"""Starts `ciq tune --config CONFIG --no-lock` with SLOW_LINK_MARK set (the
linker launcher Inputs/slow_link.sh waits at the first link), waits until a
link of the baseline's build waits there (its CUDA object compiled and
receipted), and kills the engine with SIGKILL, then the waiting link, as a
user's kill -9 and a Ctrl-C of what is left would.

usage: kill_during_link.py <ciq> <config> <mark file>"""
import os
import signal
import subprocess
import sys
import time

ciq, cfg, mark = sys.argv[1], sys.argv[2], sys.argv[3]
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
# The build the engine started is in its own process groups; end the waiting link.
subprocess.run(["pkill", "-KILL", "-f", "slow_link.sh"], check=False)
print("killed during a link")
