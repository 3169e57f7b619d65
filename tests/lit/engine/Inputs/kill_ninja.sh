#!/bin/sh
# A CUDA compiler launcher that, once (while the flag file exists), kills the
# ninja that runs it with SIGKILL, as an outside kill of the nested build
# would; the compile itself goes on (it runs in a process group of its own).
if rmdir "$KILL_NINJA_ONCE" 2>/dev/null; then
  pid=$PPID
  while [ "$pid" -gt 1 ]; do
    if [ "$(cat /proc/$pid/comm)" = ninja ]; then
      kill -9 "$pid"
      break
    fi
    pid=$(cut -d' ' -f4 /proc/$pid/stat)
  done
fi
exec "$@"
