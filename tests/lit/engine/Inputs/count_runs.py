"""A benchmark command for the engine's lit tests: appends one line to the
file given as argv[1] each time it runs (so a test can count how often the
engine measured), and prints a fixed metric. The project's own binary needs
a GPU, which these tests do not have."""
import sys

with open(sys.argv[1], "a") as f:
    f.write("run\n")
print("time_ms=1.0")
