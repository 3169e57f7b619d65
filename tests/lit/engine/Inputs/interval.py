"""A benchmark command for the engine's lit tests: appends "<start> <end>"
(seconds, this host's monotonic clock) to the file given as argv[1] around
a short sleep, so a test can check that no two measurements overlapped, and
prints a fixed metric."""
import sys
import time

start = time.monotonic()
time.sleep(0.3)
end = time.monotonic()
with open(sys.argv[1], "a") as f:
    f.write(f"{start} {end}\n")
print("time_ms=1.0")
