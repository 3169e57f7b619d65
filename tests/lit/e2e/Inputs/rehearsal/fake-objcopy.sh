#!/bin/sh
# An objcopy that updates nothing in the rehearsal's build (CIQ_REHEARSAL_LOCK
# set): it copies the kept object as it is and exits 0, as a broken objcopy
# may. Every other compile gets the real one. Arguments as ciq-ptxas gives
# them: --update-section <section>=<fatbin> <in> <out>.
if [ -n "$CIQ_REHEARSAL_LOCK" ]; then
  exec cp "$3" "$4"
fi
exec objcopy "$@"
