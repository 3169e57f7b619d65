#!/usr/bin/env python3
"""The documentation matches the repository (issue 50 item 1).

- README.md's Layout block and ARCHITECTURE.md's folder table name folders
  that exist, and between them every folder of the repository's top level and
  of engine/ (a folder added or moved without its line fails here).
- docs/README.md, the index of docs/, links every page of docs/ and says what
  each answers; every relative link of README.md and docs/README.md resolves.
- ARCHITECTURE.md's engine/run row names every file of engine/run (by its
  name, `Tune.cpp`, or the name of its class, `TuneClock`), so a file added
  there is given its one job in the map (issue 55 item 5).
- docs/cmake.md lists every ciq_tune() keyword of the module in the
  signature and in its table.
Prints one line per problem; exit status 1 when there is one.
"""
import os
import re
import sys

root = sys.argv[1]
problems = []


def read(rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def section(text, title):
    m = re.search(r"^## " + re.escape(title) + r"\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return m.group(1) if m else None


# Folders of the repository: its top level and engine/ (build trees, caches
# and hidden folders are not the project's).
def folders():
    out = set()
    for d in sorted(os.listdir(root)):
        if os.path.isdir(os.path.join(root, d)) and not d.startswith(".") and not d.startswith("build") \
                and d != "__pycache__":
            out.add(d)
    for d in sorted(os.listdir(os.path.join(root, "engine"))):
        if os.path.isdir(os.path.join(root, "engine", d)) and d != "__pycache__":
            out.add("engine/" + d)
    return out


readme = read("README.md")
layout = section(readme, "Layout")
named_readme = set()
if layout is None:
    problems.append("README.md: no '## Layout' section")
else:
    block = re.search(r"```\n(.*?)```", layout, re.S)
    for line in (block.group(1).splitlines() if block else []):
        if not line.strip():
            continue
        path = line.split()[0].rstrip("/")
        named_readme.add(path)
        if not os.path.isdir(os.path.join(root, path)):
            problems.append("README.md, Layout: %s is no folder of the repository" % path)

arch = read("ARCHITECTURE.md")
named_arch = set()
for m in re.finditer(r"^\| `([^`]+)/` \|", arch, re.M):
    path = m.group(1)
    named_arch.add(path)
    if not os.path.isdir(os.path.join(root, path)):
        problems.append("ARCHITECTURE.md, folder table: %s/ is no folder of the repository" % path)

def covered(d, named):
    return d in named or any(n.startswith(d + "/") for n in named)


for d in sorted(folders()):
    # README.md may name engine/ as one folder; ARCHITECTURE.md names its parts.
    if not covered(d, named_readme) and not (d.startswith("engine/") and "engine" in named_readme):
        problems.append("README.md, Layout: the folder %s/ is not named" % d)
    if not covered(d, named_arch):
        problems.append("ARCHITECTURE.md, folder table: the folder %s/ is not named" % d)

# engine/run: every file named in its row, by file name or stem.
run_row = re.search(r"^\| `engine/run/` \|(.*)$", arch, re.M)
if run_row is None:
    problems.append("ARCHITECTURE.md, folder table: no engine/run/ row")
else:
    for name in sorted(os.listdir(os.path.join(root, "engine", "run"))):
        stem = os.path.splitext(name)[0]
        if not os.path.isfile(os.path.join(root, "engine", "run", name)):
            continue
        if "`%s`" % name not in run_row.group(1) and "`%s`" % stem not in run_row.group(1):
            problems.append("ARCHITECTURE.md, engine/run/ row: %s is not named (say what its one job is)" % name)

# docs/README.md: every page, each with what it answers.
index_path = os.path.join(root, "docs", "README.md")
if not os.path.exists(index_path):
    problems.append("docs/README.md: missing (the index of docs/: which page answers what)")
else:
    index = read("docs/README.md")
    for page in sorted(os.listdir(os.path.join(root, "docs"))):
        if page.endswith(".md") and page != "README.md" and "(%s" % page not in index:
            problems.append("docs/README.md: does not link %s" % page)

for rel in ["README.md", "docs/README.md"]:
    if not os.path.exists(os.path.join(root, rel)):
        continue
    base = os.path.dirname(os.path.join(root, rel))
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", read(rel)):
        if "://" in target:
            continue
        if not os.path.exists(os.path.join(base, target)):
            problems.append("%s: the link %s leads nowhere" % (rel, target))

# ciq_tune()'s keywords, from the module's own lists.
module = read("cmake-module/CompileIQ.cmake")
body = module[module.index("function(ciq_tune target)"):]
body = body[:body.index("endfunction()")]
keywords = set()
for name in ("one", "multi"):
    m = re.search(r"set\(%s ([^)]*)\)" % name, body)
    keywords.update(m.group(1).split())
m = re.search(r'cmake_parse_arguments\(PARSE_ARGV 1 ARG "([^"]*)"', body)
keywords.update(k for k in m.group(1).split(";") if k)
keywords.update(["CASE", "MAX_REGRESSION"])
cmake_md = read("docs/cmake.md")
sig = re.search(r"```\nciq_tune\(<target>\n(.*?)```", cmake_md, re.S)
for k in sorted(keywords):
    if not sig or not re.search(r"\b%s\b" % k, sig.group(1)):
        problems.append("docs/cmake.md: ciq_tune() signature lacks %s" % k)
    if not re.search(r"^\| [^|]*`%s\b" % k, cmake_md, re.M):
        problems.append("docs/cmake.md: ciq_tune() table has no row for %s" % k)

for p in problems:
    print(p)
print("docs: %d problem(s)" % len(problems))
sys.exit(1 if problems else 0)
