"""Checks that results.csv's header is the column list of docs/results-csv.md,
followed by one column per objective, in order.
usage: check_csv_header.py <docs/results-csv.md> <results.csv> <objective>..."""
import csv
import re
import sys

doc, results, objectives = sys.argv[1], sys.argv[2], sys.argv[3:]
documented = []
for line in open(doc):
    m = re.match(r"\|\s*`([^`]+)`", line)
    if m and m.group(1) != "<objective>":
        documented.append(m.group(1))
with open(results, newline="") as f:
    header = next(csv.reader(f))
expected = documented + objectives
if header != expected:
    sys.exit("results.csv header differs from docs/results-csv.md:\n  csv:  %s\n  docs: %s" % (header, expected))
print("header matches docs/results-csv.md: %d columns" % len(header))
