#!/bin/sh
# The make program (CMAKE_MAKE_PROGRAM) of node-kill.test's build tree. In a
# Slurm job with $HOLD_DIR set, the build first waits until the scenario lets
# its job go ($HOLD_DIR/<job id>.go, or all.go) or kills its node: the node
# then surely dies while the job runs, never after it wrote its result (a
# race a loaded machine lost). Anywhere else it is ninja.
if [ -n "$SLURM_JOB_ID" ] && [ -n "$HOLD_DIR" ]; then
  touch "$HOLD_DIR/$SLURM_JOB_ID.waiting"
  i=0
  while [ ! -e "$HOLD_DIR/$SLURM_JOB_ID.go" ] && [ ! -e "$HOLD_DIR/all.go" ] && [ $i -lt 3000 ]; do
    sleep 0.1
    i=$((i + 1))
  done
fi
exec ninja "$@"
