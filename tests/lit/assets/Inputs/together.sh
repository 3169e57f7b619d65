#!/bin/sh
# Starts N copies of a command at once and waits for all of them.
# usage: together.sh <prefix> <N> <command...>; copy k writes <prefix>.k.out
# and <prefix>.k.err, and a line "copy k: exit <status>" is printed for each.
prefix=$1 n=$2; shift 2
pids=""
for k in $(seq "$n"); do
  "$@" >"$prefix.$k.out" 2>"$prefix.$k.err" &
  pids="$pids $!"
done
k=0
for p in $pids; do
  k=$((k + 1))
  wait "$p"
  echo "copy $k: exit $?"
done
