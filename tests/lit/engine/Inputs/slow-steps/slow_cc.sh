#!/bin/sh
# A host compiler that sleeps while SLOW_STEP_DIR is set (Makefile says why).
if [ -n "$SLOW_STEP_DIR" ]; then
  touch "$SLOW_STEP_DIR/host-cc"
  sleep 60
fi
exec c++ "$@"
