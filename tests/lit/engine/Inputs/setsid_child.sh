#!/bin/sh
# CUDA compiler launcher for setsid-child.test and bench/kill_hang.py: with
# $SETSID_CHILD_PIDS set, the compile of TILE=8 starts a child in a session
# of its own (setsid), which keeps the compile's output open, and hangs until
# the compile timeout. The child appends "<pid> <start time>" to that file.
if [ -n "$SETSID_CHILD_PIDS" ]; then
  case " $* " in
    *" -DTILE=8 "*)
      setsid sh -c 'echo "$$ $(cut -d" " -f22 /proc/$$/stat)" >> "$SETSID_CHILD_PIDS"; exec sleep 600' &
      sleep 600
      ;;
  esac
fi
exec "$@"
