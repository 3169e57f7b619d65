"""tune.yaml of Inputs/kernels2 with N defines no code reads as its
command-line space (every configuration builds the default binary), a
budget of 6 and one configuration per binary: twins that spend the
configuration cap. Usage: unused_defines.py tune.yaml RUNDIR N"""
import sys

text = open(sys.argv[1]).read()
rundir, n = sys.argv[2], int(sys.argv[3])
text = text.replace("RUNDIR", rundir).replace("kernel_controls: KC", "kernel_controls: on")
text = text.replace("max_evaluations: 14", "max_evaluations: 6\n  max_configurations_per_binary: 1")
one = "    - name: unused\n      define: CIQ_LIT_UNUSED\n      literal: 1"
assert one in text
text = text.replace(one, "\n".join(
    "    - name: unused%d\n      define: CIQ_LIT_UNUSED%d\n      literal: 1" % (i, i) for i in range(n)))
sys.stdout.write(text)
