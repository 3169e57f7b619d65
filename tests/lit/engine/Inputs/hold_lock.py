"""Holds an exclusive flock on argv[1] (writing its pid there, as a running
`ciq tune` does) while it runs the command after "--"; exits with its status."""
import fcntl, os, subprocess, sys

os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with open(sys.argv[1], "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.truncate(0)
    f.write("%d\n" % os.getpid())
    f.flush()
    sys.exit(subprocess.call(sys.argv[sys.argv.index("--") + 1:]))
