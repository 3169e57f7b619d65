#!/bin/sh
# Linker launcher for kill-during-link.test: while $SLOW_LINK_MARK names a
# file, each link first creates it and waits there (the engine is killed
# meanwhile); otherwise it links at once.
if [ -n "$SLOW_LINK_MARK" ]; then
  touch "$SLOW_LINK_MARK"
  sleep 60
fi
exec "$@"
