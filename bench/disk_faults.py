#!/usr/bin/env python3
"""A full, read-only or unwritable disk under a search (issue 29 item 2), as
a script: re-measures what `ciq tune` and `ciq resume` do on each, against a
built ciq.

usage: disk_faults.py BUILD_DIR [--work DIR] [--case NAME]... [--at N] [--budget N]
needs root: it mounts its own small file systems under --work (a tmpfs, and
a loop-mounted ext4 image where the fault needs one) and unmounts them again.

Cases (each a seeded compile-only search of tests/lit/engine/Inputs/proj
whose build tree and run directory are on the mounted disk; the lock is
written beside the project, off that disk):
  full-at-evaluation  a tmpfs filled to the last byte once the journal holds
                      --at evaluations
  full-at-baseline    the same tmpfs filled as the baseline's compile starts
                      (by a launcher after ciq-ptxas in the CUDA launcher
                      chain, armed after configuring; PTX reuse off, as it
                      runs nvcc without the launchers)
  read-only           an ext4 (errors=remount-ro) made read-only by an error
                      (/sys/fs/ext4/<dev>/trigger_fs_error) once the journal
                      holds --at evaluations, as a failing disk does
  immutable-journal   `chattr +i` on the journal (ext4, which refuses writes
                      to an immutable file even where it is open) once it
                      holds --at evaluations
  read-only-run-dir   the run directory on a tmpfs mounted read-only before
                      the tune starts (the build tree off that disk)
  full-at-lock        the lockfile on a tmpfs that is full before the tune
                      starts (build tree and run directory off that disk):
                      the search runs to its end and the lock write fails
Then the fault is undone (the fill removed; the ext4 unmounted, checked and
mounted again; chattr -i) and `ciq resume` runs.

For each case it prints:
  case NAME
    tune: exit S                         (0: the search went on as if nothing happened)
    error lines: N                       (`ciq: error:` lines on stderr)
    error: LINE                          (the first, the disk's mount point written <disk>)
    INVALID: N (reason xN, ...)          (evaluations journaled as INVALID)
    lock written: yes|no                 (by the faulted tune)
    journal: N evaluations, ends with a whole line: yes|no
    resume: exit S, N of BUDGET evaluations, done: yes|no
    lock after resume: yes|no            (full-at-lock, read-only-run-dir)
Goal: tune exits non-zero with one error line naming a path on <disk> and
the errno, 0 INVALID, no lock, a whole last line, and the resume completes.
A case that cannot run here (no loop device, no mkfs.ext4) prints
"skipped: why". tests/lit/engine/disk-*.test run it per case.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "..", "tests", "lit", "engine", "Inputs", "proj")
CASES = ["full-at-evaluation", "full-at-baseline", "read-only", "immutable-journal", "read-only-run-dir",
         "full-at-lock"]
TIMEOUT = 300

p = argparse.ArgumentParser()
p.add_argument("build_dir")
p.add_argument("--work")
p.add_argument("--case", action="append", choices=CASES)
p.add_argument("--at", type=int, default=2, help="evaluations journaled before the fault (default 2)")
p.add_argument("--budget", type=int, default=5, help="evaluations of each search, the baseline included")
args = p.parse_args()
CIQ = os.path.abspath(os.path.join(args.build_dir, "bin", "ciq"))
MODULE_DIR = os.path.abspath(os.path.join(args.build_dir, "lib", "cmake", "CompileIQ"))

CONFIG = """target: app
build_dir: {build}
run_dir: {run}
lockfile: {lock}
objectives: [registers, spill_bytes]
search:
  strategy: genetic
  pool_size: 2
  generations: {budget}
  max_evaluations: {budget}
  # "N of BUDGET evaluations" counts the journal's candidates: every
  # configuration is one step of the budget (twins included).
  budget_counts: configurations
  seed: 7
  canary: false
space:
  controls:
    - name: opt-level
      ptxas: "--opt-level={{}}"
      choice: [1, 2, 3]
    - name: maxrregcount
      ptxas: "--maxrregcount={{}}"
      choice: [32, 40, 64]
    - name: tile
      define: TILE
      choice: [2, 4, 8]
"""


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def journal_lines(run_dir):
    try:
        with open(os.path.join(run_dir, "journal.jsonl"), "rb") as f:
            data = f.read()
    except OSError:
        return [], True
    lines = []
    for raw in data.split(b"\n"):
        try:
            lines.append(json.loads(raw))
        except ValueError:
            pass
    return lines, data == b"" or data.endswith(b"\n")


def evaluations(run_dir):
    return [j for j in journal_lines(run_dir)[0] if j.get("op") == "evaluation"]


class Disk:
    """A file system mounted at `path` for one case; unmounted on exit."""

    def __init__(self, work, kind):
        self.kind = kind
        self.path = os.path.join(work, "disk")
        self.image = os.path.join(work, "disk.img")
        os.makedirs(self.path)
        if kind == "tmpfs":
            self._check(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", self.path])
        else:
            self._check(["truncate", "-s", "96M", self.image])
            self._check(["mkfs.ext4", "-q", "-F", self.image])
            self.mount_ext4()

    @staticmethod
    def _check(argv):
        r = run(argv)
        if r.returncode != 0:
            raise RuntimeError(" ".join(argv) + ": " + (r.stderr.strip() or "exit %d" % r.returncode))

    def mount_ext4(self):
        self._check(["mount", "-o", "loop,errors=remount-ro", self.image, self.path])

    def fill(self):
        # Up to the last byte the file system gives, then the remainder a page at a time.
        with open(os.path.join(self.path, "fill"), "wb", buffering=0) as f:
            for size in (1 << 20, 4096, 1):
                try:
                    while True:
                        f.write(b"\0" * size)
                except OSError:
                    pass

    def unfill(self):
        if os.path.exists(os.path.join(self.path, "fill")):
            os.remove(os.path.join(self.path, "fill"))

    def break_readonly(self):
        dev = os.path.basename(os.path.realpath(run(["findmnt", "-n", "-o", "SOURCE", self.path]).stdout.strip()))
        with open("/sys/fs/ext4/%s/trigger_fs_error" % dev, "w") as f:
            f.write("disk_faults.py: the disk fails\n")

    def remount(self, mode):
        self._check(["mount", "-o", "remount," + mode, self.path])

    def repair(self):
        self._check(["umount", self.path])
        run(["e2fsck", "-fy", self.image])
        self.mount_ext4()

    def close(self):
        run(["umount", "-l", self.path])


def watch(proc, cond, act, done):
    """Runs act() once cond() holds, while proc runs."""
    while proc.poll() is None:
        if cond():
            act()
            done.append(True)
            return
        time.sleep(0.01)


def one_case(name, work):
    print("case " + name)
    disk = Disk(work, "tmpfs" if name.startswith("full") or name == "read-only-run-dir" else "ext4")
    try:
        measure(name, work, disk)
    finally:
        run(["chattr", "-i", os.path.join(disk.path, "run", "journal.jsonl")])
        disk.close()
    sys.stdout.flush()


def measure(name, work, disk):
    proj = os.path.join(work, "proj")
    shutil.copytree(PROJECT, proj)
    # Where each part lives: on the faulted disk, or (the part a case does
    # not fault) beside the project.
    lock = os.path.join(disk.path if name == "full-at-lock" else work, "ciq.lock")
    build = os.path.join(work if name in ("read-only-run-dir", "full-at-lock") else disk.path, "build")
    run_dir = os.path.join(work if name == "full-at-lock" else disk.path, "run")
    cfg = os.path.join(work, "ciq.yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(build=build, run=run_dir, lock=lock, budget=args.budget))
    # The launcher fills the disk when armed, before the compile it runs.
    armed = os.path.join(work, "fill.armed")
    launcher = os.path.join(work, "fill-launcher.sh")
    with open(launcher, "w") as f:
        f.write('#!/bin/sh\nif [ -e "%s" ]; then rm -f "%s"; head -c 1G /dev/zero > "%s/fill" 2>/dev/null; fi\n'
                'exec "$@"\n' % (armed, armed, disk.path))
    os.chmod(launcher, 0o755)
    r = run(["cmake", "-S", proj, "-B", build, "-G", "Ninja", "-DCompileIQ_DIR=" + MODULE_DIR,
             "-DCMAKE_CUDA_COMPILER_LAUNCHER=" + launcher])
    if r.returncode != 0:
        raise RuntimeError("cmake: " + r.stderr.strip())
    # On disk before the fault: an ext4 that turns read-only drops what it
    # had not written yet, and a configure lost that way is another story.
    os.sync()
    journal = os.path.join(run_dir, "journal.jsonl")
    at = lambda: len(evaluations(run_dir)) >= args.at
    cond, act, undo = {
        "full-at-evaluation": (at, disk.fill, disk.unfill),
        "full-at-baseline": (lambda: True, lambda: None, disk.unfill),   # armed below
        "read-only": (at, disk.break_readonly, disk.repair),
        "immutable-journal": (at, lambda: run(["chattr", "+i", journal]),
                              lambda: run(["chattr", "-i", journal])),
        "read-only-run-dir": (lambda: True, lambda: None, lambda: disk.remount("rw")),
        "full-at-lock": (lambda: True, lambda: None, disk.unfill),
    }[name]
    if name == "read-only-run-dir":
        os.makedirs(run_dir, mode=0o700)
        disk.remount("ro")
    if name == "full-at-lock":
        disk.fill()
    env = dict(os.environ)
    if name == "full-at-baseline":
        open(armed, "w").close()
        env["CIQ_PTX_REUSE"] = "0"
    proc = subprocess.Popen([CIQ, "tune", "--config", cfg], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    done = []
    t = threading.Thread(target=watch, args=(proc, cond, act, done))
    t.start()
    out, err = proc.communicate(timeout=TIMEOUT)
    t.join()
    if not done:
        print("  fault: never applied (the search ended first)")
    errors = [l for l in err.splitlines() if l.startswith("ciq: error:")]
    print("  tune: exit %d" % proc.returncode)
    print("  error lines: %d" % len(errors))
    if errors:
        print("  error: " + errors[0][len("ciq: error: "):].replace(disk.path, "<disk>").replace(work, "<work>"))
    undo()
    lines, whole = journal_lines(run_dir)
    evals = [j for j in lines if j.get("op") == "evaluation"]
    invalid = {}
    for e in evals:
        if e.get("status") == "INVALID":
            invalid[e.get("reason")] = invalid.get(e.get("reason"), 0) + 1
    reasons = ", ".join("%s x%d" % kv for kv in sorted(invalid.items()))
    print("  INVALID: %d%s" % (sum(invalid.values()), " (%s)" % reasons if reasons else ""))
    print("  lock written: " + ("yes" if os.path.exists(lock) else "no"))
    print("  journal: %d evaluations, ends with a whole line: %s" % (len(evals), "yes" if whole else "no"))
    # A tune refused before its first evaluation has nothing to resume: it is run again.
    again = "tune" if name == "read-only-run-dir" else "resume"
    r = run([CIQ, again, "--config", cfg], timeout=TIMEOUT)
    lines, _ = journal_lines(run_dir)
    n = len([j for j in lines if j.get("op") == "evaluation"])
    finished = any(j.get("op") == "done" for j in lines)
    print("  resume: exit %d, %d of %d evaluations, done: %s" % (r.returncode, n, args.budget,
                                                                  "yes" if finished else "no"))
    if r.returncode != 0:
        print("  resume error: " + r.stderr.strip().replace(disk.path, "<disk>").replace(work, "<work>"))
    if name in ("full-at-lock", "read-only-run-dir"):
        print("  lock after resume: " + ("yes" if os.path.exists(lock) else "no"))


def main():
    if os.geteuid() != 0:
        sys.exit("disk_faults.py: needs root (it mounts a tmpfs and a loop device)")
    if not os.path.exists(CIQ):
        sys.exit("disk_faults.py: no %s; give the build directory of a built ciq" % CIQ)
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="ciq-disk-faults-")
    os.makedirs(work, exist_ok=True)
    for name in args.case or CASES:
        case_dir = os.path.join(work, name)
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(case_dir)
        if name in ("read-only", "immutable-journal") and not (
                shutil.which("mkfs.ext4") and shutil.which("e2fsck") and os.path.exists("/dev/loop-control")):
            print("case %s\n  skipped: no mkfs.ext4, e2fsck or loop device here" % name)
            continue
        try:
            one_case(name, case_dir)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            print("  skipped: %s" % e)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


main()
