"""Makes DIR a CUDA install whose cicc and ptxas are the real ones, killed
with SIGKILL while they run (as the OOM killer does) on chosen calls.

usage: killing_cuda.py <real nvcc> <DIR>

DIR mirrors the real install (links), except DIR/bin/nvcc (a copy: nvcc reads
nvcc.profile beside itself, which points it at DIR/nvvm/bin/cicc, and ciq-ptxas
runs the ptxas beside the real path of nvcc when it reuses PTX) and the two
stand-ins DIR/nvvm/bin/cicc and DIR/bin/ptxas. With KILL_STATE_DIR set, every
call of a stand-in takes the next number (1, 2, ...) of its tool there; the
calls KILL_CICC_CALLS or KILL_PTXAS_CALLS list ("2 3") are killed. The killed
call's input is a FIFO that nothing writes, so the real tool is still waiting
for it when the kill comes: deterministic, with no race against a fast
compile. The kill names its target by pid, never by name."""
import os
import shutil
import stat
import sys

STANDIN = r"""#!/bin/sh
# The real {tool}, killed with SIGKILL on the calls $KILL_{upper}_CALLS lists.
real={real}
if [ -z "$KILL_STATE_DIR" ]; then exec "$real" "$@"; fi
n=1
while ! mkdir "$KILL_STATE_DIR/{tool}.$n" 2>/dev/null; do n=$((n+1)); done
case " $KILL_{upper}_CALLS " in
  *" $n "*) ;;
  *) exec "$real" "$@" ;;
esac
# Its input ({suffix}) becomes a FIFO nothing writes.
fifo="$KILL_STATE_DIR/{tool}.$n/input{suffix}"
mkfifo "$fifo"
for a in "$@"; do
  shift
  case "$a" in *{suffix}) a="$fifo" ;; esac
  set -- "$@" "$a"
done
me=$$
( while kill -0 $me 2>/dev/null && [ "$(cat /proc/$me/comm 2>/dev/null)" != {tool} ]; do sleep 0.01; done
  kill -KILL $me ) &
exec "$real" "$@"
"""


def link_tree(src, dst, keep_real):
    """dst mirrors src by links, except the entries keep_real names (made by the caller)."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        if name not in keep_real:
            os.symlink(os.path.join(src, name), os.path.join(dst, name))


def standin(path, tool, real, suffix):
    with open(path, "w") as f:
        f.write(STANDIN.format(tool=tool, upper=tool.upper(), real=real, suffix=suffix))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


real_nvcc, out = os.path.realpath(sys.argv[1]), sys.argv[2]
root = os.path.dirname(os.path.dirname(real_nvcc))
link_tree(root, out, {"bin", "nvvm"})
link_tree(os.path.join(root, "bin"), os.path.join(out, "bin"), {"nvcc", "ptxas"})
shutil.copy2(real_nvcc, os.path.join(out, "bin", "nvcc"))
standin(os.path.join(out, "bin", "ptxas"), "ptxas", os.path.join(root, "bin", "ptxas"), ".ptx")
link_tree(os.path.join(root, "nvvm"), os.path.join(out, "nvvm"), {"bin"})
os.makedirs(os.path.join(out, "nvvm", "bin"))
standin(os.path.join(out, "nvvm", "bin", "cicc"), "cicc", os.path.join(root, "nvvm", "bin", "cicc"), ".ii")
