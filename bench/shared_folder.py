#!/usr/bin/env python3
"""Shared folders: another user of the machine against the person tuning
(issue 29, item 1), as a script.

Each attack is prepared by user `nobody` in a folder standing in for /tmp
(root's, mode 1777, made here; the real /tmp is not touched), then a built
ciq runs as root, as in CI, and the script checks what the attack aimed at:

  gpu-lock: planted folder   <tmp>/ciq-gpu-locks made open to all, its
                             host.lock a link to the victim's file (the
                             issue's `ln -s /etc/passwd ...`)
  gpu-lock: planted link     $CIQ_GPU_LOCK_DIR a shared folder (root's, mode
                             1777), host.lock in it a link to the victim's file
  gpu-lock: planted default  the same link under the default lock's name,
                             <tmp>/ciq-gpu-host.lock
  gpu-lock: foreign folder   $CIQ_GPU_LOCK_DIR a folder nobody made, holding
                             such a link
  gpu-lock: folder link      $CIQ_GPU_LOCK_DIR a link nobody made, to a folder
                             of root's (root made a mode-0666 host.lock there;
                             issue 42 item 3)
  gpu-lock: planted file     a regular file of nobody's as host.lock in the
                             shared folder (ciq used to make it mode 0666 and
                             empty it)
  cache: planted version     $XDG_CACHE_HOME nobody's, with compiler-version
                             entries saying nvcc and ptxas are 12.8.93: does
                             the lock of `ciq tune` record 12.8.93?
  cache: planted space       $XDG_CACHE_HOME nobody's, with a release
                             manifest and a search space of theirs: does
                             `ciq spaces fetch` hand it out?
  cache: planted tmp folder  no HOME: <tmp>/ciq-<uid> made by nobody first,
                             with a planted version entry
  run-dir: long, standin     run_dir a path of more than 100 characters in
                             the shared folder, made first by nobody (mode
                             0777), its standin/ holding nobody's objcopy,
                             sha256sum, mktemp, cc and sh (issue 51 item 1):
                             did any run as root?
  run-dir: long, procs       the same run dir with procs/<n> naming a process
                             group of root's (pgid and its leader's start time)
  run-dir: long, build.pgid  the same with build.pgid naming that group
  run-dir: engine.lock link  a short run_dir made first by nobody, its
                             engine.lock a link to the victim's file (item 2)

An attack is refused when its target is unchanged (the victim's bytes and
mode, the true compiler release, no planted space used). Prints one line per
attack (with ciq's error line, if any) and "shared_folder: N of M attacks
refused"; exit status 1 unless all are.

usage: sudo python3 bench/shared_folder.py BUILD_DIR     (needs root and a
user `nobody`; without root it says so and exits 0)
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

NOBODY = 65534


def as_nobody(fn):
    """Runs fn() in a child process as nobody; True when it returned truthy."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.umask(0)
            os._exit(0 if fn() is not False else 1)
        except BaseException as e:  # the child must never return into the script
            print(f"as nobody: {e}", file=sys.stderr)
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def tool(name):
    return shutil.which(name) or "/usr/local/cuda/bin/" + name


def version_key(exe):
    """The compiler-version cache key of common/CompilerVersion.cpp."""
    real = os.path.realpath(exe)
    st = os.stat(real)
    text = f"{real}\n{st.st_mtime_ns // 10**9}.{st.st_mtime_ns % 10**9}\n{st.st_size}"
    return hashlib.sha256(text.encode()).hexdigest()


def plant_version(cache_ciq, version):
    os.makedirs(os.path.join(cache_ciq, "compiler-version"), exist_ok=True)
    for name in ("nvcc", "ptxas"):
        with open(os.path.join(cache_ciq, "compiler-version", version_key(tool(name))), "w") as f:
            f.write(version + "\n")


CONFIG = """\
# A tiny compile whose program reports 1 ms when -DFAST reached it, else 2:
# the GPU lock is taken for each measurement, and the winner's lock written.
build:
  command: [sh, -c, '"$CIQ_PTXAS" NVCC -c k.cu -o k.o -arch=sm_90 && t=2 && if grep -q fast_kernel k.o; then t=1; fi && printf "#!/bin/sh\\necho time_ms=$t\\n" > app && chmod +x app']
  clean: [rm, -f, k.o, app]
run_dir: run
lockfile: ciq.lock
objectives: [time_ms]
benchmark:
  command: [./app]
  warmup: 0
  repeats: 1
  finalists: 0
  metric: {regex: 'time_ms=([-0-9.]+)'}
search: {strategy: exhaustive, canary: false}
space:
  controls:
    - name: fast
      define: FAST
      literal: 1
"""


KERNEL = "#ifdef FAST\n__global__ void fast_kernel(float *x) { x[threadIdx.x] *= 2; }\n#endif\n"


class Scene:
    """A fresh stand-in /tmp, victim file and project for one attack."""

    def __init__(self, root, name):
        self.dir = os.path.join(root, name.replace(" ", "-").replace(":", ""))
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o755)
        self.tmp = os.path.join(self.dir, "tmp")
        os.mkdir(self.tmp)
        os.chmod(self.tmp, 0o1777)
        self.victim = os.path.join(self.dir, "victim")
        with open(self.victim, "w") as f:
            f.write("precious\n")
        os.chmod(self.victim, 0o644)
        self.project = os.path.join(self.dir, "project")
        os.mkdir(self.project)
        with open(os.path.join(self.project, "ciq.yaml"), "w") as f:
            f.write(CONFIG.replace("NVCC", tool("nvcc")))
        with open(os.path.join(self.project, "k.cu"), "w") as f:
            f.write(KERNEL)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("CIQ_GPU_LOCK_DIR", "XDG_CACHE_HOME", "CIQ_SEARCH_SPACES_DIR")}
        self.env["TMPDIR"] = self.tmp

    def victim_intact(self):
        st = os.stat(self.victim)
        return open(self.victim).read() == "precious\n" and (st.st_mode & 0o7777) == 0o644

    def ciq(self, ciq, *args):
        r = subprocess.run([ciq, *args], cwd=self.project, env=self.env, capture_output=True, text=True,
                           timeout=300)
        errors = [l for l in r.stderr.splitlines() if "error:" in l]
        return r, (errors[0] if errors else "")

    def tune(self, ciq):
        return self.ciq(ciq, "tune", "--config", "ciq.yaml")

    def locked_versions(self):
        """The nvcc and ptxas releases the search's lock records ("" when there is no lock)."""
        try:
            lock = json.load(open(os.path.join(self.project, "ciq.lock")))
            compiler = (next(iter(lock["architectures"].values())) if lock.get("schema_version", 1) >= 2 else lock)["compiler"]
            return {compiler["nvcc"]["version"], compiler["ptxas"]["version"]}
        except (OSError, ValueError, KeyError, TypeError):
            return {""}


def gpu_planted_folder(s, ciq):
    locks = os.path.join(s.tmp, "ciq-gpu-locks")
    as_nobody(lambda: (os.mkdir(locks, 0o777), os.symlink(s.victim, os.path.join(locks, "host.lock"))))
    _, err = s.tune(ciq)
    return s.victim_intact(), err


def shared_lock_dir(s):
    """$CIQ_GPU_LOCK_DIR as an administrator makes it: root's, mode 1777."""
    locks = os.path.join(s.tmp, "locks")
    os.mkdir(locks)
    os.chmod(locks, 0o1777)
    s.env["CIQ_GPU_LOCK_DIR"] = locks
    return locks


def gpu_planted_link(s, ciq):
    locks = shared_lock_dir(s)
    as_nobody(lambda: os.symlink(s.victim, os.path.join(locks, "host.lock")))
    _, err = s.tune(ciq)
    return s.victim_intact(), err


def gpu_planted_default(s, ciq):
    as_nobody(lambda: os.symlink(s.victim, os.path.join(s.tmp, "ciq-gpu-host.lock")))
    _, err = s.tune(ciq)
    return s.victim_intact(), err


def gpu_foreign_folder(s, ciq):
    locks = os.path.join(s.tmp, "locks")
    as_nobody(lambda: (os.mkdir(locks, 0o777), os.symlink(s.victim, os.path.join(locks, "host.lock"))))
    s.env["CIQ_GPU_LOCK_DIR"] = locks
    _, err = s.tune(ciq)
    return s.victim_intact(), err


def gpu_folder_link(s, ciq):
    target = os.path.join(s.dir, "root-locks")
    os.mkdir(target)
    os.chmod(target, 0o1777)
    link = os.path.join(s.tmp, "locks")
    as_nobody(lambda: os.symlink(target, link))
    s.env["CIQ_GPU_LOCK_DIR"] = link
    _, err = s.tune(ciq)
    return not os.path.exists(os.path.join(target, "host.lock")), err or "host.lock made in " + target


def gpu_planted_file(s, ciq):
    lock = os.path.join(shared_lock_dir(s), "host.lock")

    def plant():
        with open(lock, "w") as f:
            f.write("nobody's own file\n")
        os.chmod(lock, 0o644)
    as_nobody(plant)
    _, err = s.tune(ciq)
    st = os.stat(lock)
    return open(lock).read() == "nobody's own file\n" and (st.st_mode & 0o7777) == 0o644, err


def version_refused(s, err):
    """The search's lock names the true releases, or ciq refused the cache folder."""
    got = s.locked_versions()
    planted = "12.8.93" in got
    return (not planted and "" not in got) or "cache folder" in err, err or "lock says " + ", ".join(sorted(got))


def cache_planted_version(s, ciq):
    xdg = os.path.join(s.tmp, "xdg")
    as_nobody(lambda: plant_version(os.path.join(xdg, "ciq"), "12.8.93"))
    s.env["XDG_CACHE_HOME"] = xdg
    _, err = s.tune(ciq)
    return version_refused(s, err)


def cache_planted_space(s, ciq):
    xdg = os.path.join(s.tmp, "xdg")
    tag = "search-spaces-2099.01"
    space = b"name: planted\ncontrols:\n  - name: x\n    ptxas: \"--opt-level={}\"\n    literal: 0\n"
    sha = hashlib.sha256(space).hexdigest()
    manifest = {"manifest_format": "1.0.0", "tag": tag, "generated_at": "2099-01-01T00:00:00Z",
                "entries": [{"compiler": "ptxas", "compiler_version": "13.0", "variant": "default",
                             "filename": "ptxas-13.0-default.yaml", "sha256": sha, "size_bytes": len(space),
                             "search_space_format": "yaml", "description": "planted"}]}

    def plant():
        folder = os.path.join(xdg, "ciq", tag)
        os.makedirs(folder)
        with open(os.path.join(folder, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        with open(os.path.join(folder, sha[:12] + "_ptxas-13.0-default.yaml"), "wb") as f:
            f.write(space)
    as_nobody(plant)
    s.env.update(XDG_CACHE_HOME=xdg, CIQ_GITHUB_API_URL="http://127.0.0.1:9", CIQ_HTTP_RETRIES="0")
    r, err = s.ciq(ciq, "spaces", "fetch", "ptxas", "13.0", "--tag", tag)
    return "fetched" not in r.stdout, err


def cache_planted_tmp_folder(s, ciq):
    mine = os.path.join(s.tmp, f"ciq-{os.geteuid()}")
    as_nobody(lambda: (os.mkdir(mine, 0o777), plant_version(os.path.join(mine, "cache"), "12.8.93")))
    for k in ("HOME", "XDG_CACHE_HOME"):
        s.env.pop(k, None)
    _, err = s.tune(ciq)
    return version_refused(s, err)


LONG = "a-run-directory-whose-path-is-long-enough-that-its-socket-would-not-fit-" + "x" * 40


def start_time(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19])


def foreign_run_dir(s, long=True):
    """A run dir nobody made first in the shared folder, named in ciq.yaml."""
    run = os.path.join(s.tmp, LONG, "run") if long else os.path.join(s.tmp, "run")
    as_nobody(lambda: (os.makedirs(run, 0o777), os.chmod(run, 0o777),
                       os.chmod(os.path.dirname(run), 0o777) if long else None))
    cfg = os.path.join(s.project, "ciq.yaml")
    text = open(cfg).read().replace("run_dir: run", "run_dir: " + run)
    with open(cfg, "w") as f:
        f.write(text)
    assert not long or len(run) > 100, run
    return run


def run_dir_standin(s, ciq):
    run = foreign_run_dir(s)
    marker = os.path.join(s.tmp, "ran-as-victim")

    def plant():
        os.makedirs(os.path.join(run, "standin"), 0o777)
        for tool_name in ("objcopy", "sha256sum", "mktemp", "cc", "sh", "rm", "grep", "printf", "chmod"):
            path = os.path.join(run, "standin", tool_name)
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\ntouch {marker}.$(id -u)\nexec /usr/bin/{tool_name} \"$@\"\n")
            os.chmod(path, 0o777)
    as_nobody(plant)
    _, err = s.tune(ciq)
    return not os.path.exists(marker + ".0"), err or "nobody's programs ran as root"


def victim_group():
    """A process group of root's that nothing should end: (process, pgid, start)."""
    p = subprocess.Popen(["sleep", "300"], start_new_session=True)
    return p, p.pid, start_time(p.pid)


def planted_record(s, ciq, where):
    run = foreign_run_dir(s)
    victim, pgid, start = victim_group()

    def plant():
        if where == "procs":
            os.makedirs(os.path.join(run, "procs"), 0o777)
            path = os.path.join(run, "procs", "4242")
        else:
            path = os.path.join(run, "build.pgid")
        with open(path, "w") as f:
            f.write(f"{pgid} {start}\n")
        os.chmod(path, 0o666)
    as_nobody(plant)
    try:
        _, err = s.tune(ciq)
        alive = victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
    return alive, err or "root's process group was killed"


def run_dir_procs(s, ciq):
    return planted_record(s, ciq, "procs")


def run_dir_build_pgid(s, ciq):
    return planted_record(s, ciq, "build.pgid")


def run_dir_engine_lock(s, ciq):
    run = foreign_run_dir(s, long=False)
    as_nobody(lambda: os.symlink(s.victim, os.path.join(run, "engine.lock")))
    _, err = s.tune(ciq)
    return s.victim_intact(), err


ATTACKS = [("gpu-lock: planted folder", gpu_planted_folder),
           ("gpu-lock: planted link", gpu_planted_link),
           ("gpu-lock: planted default", gpu_planted_default),
           ("gpu-lock: foreign folder", gpu_foreign_folder),
           ("gpu-lock: folder link", gpu_folder_link),
           ("gpu-lock: planted file", gpu_planted_file),
           ("cache: planted version", cache_planted_version),
           ("cache: planted space", cache_planted_space),
           ("cache: planted tmp folder", cache_planted_tmp_folder),
           ("run-dir: long, standin", run_dir_standin),
           ("run-dir: long, procs", run_dir_procs),
           ("run-dir: long, build.pgid", run_dir_build_pgid),
           ("run-dir: engine.lock link", run_dir_engine_lock)]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ciq = os.path.join(os.path.abspath(sys.argv[1]), "bin", "ciq")
    if not os.access(ciq, os.X_OK):
        sys.exit(f"no ciq at {ciq}: give the build folder")
    if os.geteuid() != 0:
        print("shared_folder: skipped (needs root, to act as the other user nobody)")
        return 0
    root = tempfile.mkdtemp(prefix="ciq-shared-folder-")
    os.chmod(root, 0o755)
    refused = 0
    try:
        for name, attack in ATTACKS:
            ok, said = attack(Scene(root, name), ciq)
            refused += ok
            print(f"{name:28} {'refused' if ok else 'SUCCEEDED'}" + (f"  ({said})" if said else ""))
            sys.stdout.flush()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"shared_folder: {refused} of {len(ATTACKS)} attacks refused")
    return 0 if refused == len(ATTACKS) else 1


if __name__ == "__main__":
    sys.exit(main())
