#!/bin/sh
# Starts release_server.py in the background and waits until it listens.
# usage: start_server.sh <python> <root> <state dir> [server args...]; prints the port.
py=$1 root=$2 state=$3; shift 3
rm -f "$state/port" "$state/pid"
# The server writes its own pid: $! may be a wrapper (pyenv shim) of python.
"$py" "$(dirname "$0")/release_server.py" --root "$root" --port-file "$state/port" \
  --pid-file "$state/pid" "$@" >"$state/server.log" 2>&1 &
for i in $(seq 100); do
  [ -s "$state/port" ] && [ -s "$state/pid" ] && { cat "$state/port"; exit 0; }
  sleep 0.1
done
echo "release_server.py did not start; see $state/server.log" >&2
exit 1
