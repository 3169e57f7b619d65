"""A benchmark run that outlasts its engine unless something ends it: writes
its pid and that of a child it starts to the file argv[1], then sleeps."""
import os
import subprocess
import sys
import time

child = subprocess.Popen(["sleep", "60"])
with open(sys.argv[1], "a") as f:
    f.write("%d\n%d\n" % (os.getpid(), child.pid))
time.sleep(60)
print("time_ms=1.0")
