"""Loads the library the build made by its place, as a benchmark imports an
extension module (not named on its command line), and prints its VALUE as
time_ms, with 1% noise."""
import ctypes
import random
import os

lib = ctypes.CDLL(os.path.abspath("libvalue.so"))
print("time_ms=%.4f" % (lib.value() * random.uniform(0.99, 1.01)))
