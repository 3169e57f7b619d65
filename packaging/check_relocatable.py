#!/usr/bin/env python3
"""Checks that a ciq install prefix needs nothing outside glibc and itself
(packaging/relocatable.sh): every ELF file in bin/ and lib/ciq/ needs only
glibc's libraries or ones bundled in lib/ciq/; the dynamic binaries carry the
run path $ORIGIN/../lib/ciq as DT_RPATH (which also serves the bundled
libraries' own dependencies); and, with the system's library folders out of
reach of nothing but glibc, `ldd` resolves every library of bin/ inside the
prefix or to glibc. Prints one line per problem; exit status 1 when any.

  check_relocatable.py <prefix>
"""
import os
import re
import subprocess
import sys

GLIBC = re.compile(r"^(linux-vdso|ld-linux[-\w.]*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|"
                   r"libmvec|libnss_\w+|libBrokenLocale)\.so")


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def dynamic(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    rpath = re.findall(r"\(RPATH\)\s+Library rpath: \[([^\]]*)\]", out)
    runpath = re.findall(r"\(RUNPATH\)\s+Library runpath: \[([^\]]*)\]", out)
    return needed, rpath, runpath, "There is no dynamic section" in out


def main():
    prefix = os.path.abspath(sys.argv[1])
    bundle = os.path.join(prefix, "lib", "ciq")
    bundled = set(os.listdir(bundle)) if os.path.isdir(bundle) else set()
    problems = []
    files = [os.path.join(prefix, "bin", f) for f in sorted(os.listdir(os.path.join(prefix, "bin")))]
    files += [os.path.join(bundle, f) for f in sorted(bundled)]
    for path in files:
        if os.path.islink(path) or not os.path.isfile(path) or not is_elf(path):
            continue
        needed, rpath, runpath, static = dynamic(path)
        rel = os.path.relpath(path, prefix)
        for lib in needed:
            if not GLIBC.match(lib) and lib not in bundled:
                problems.append(f"{rel} needs {lib}, which is neither glibc's nor in lib/ciq")
        if rel.startswith("bin/") and not static and needed:
            if rpath != ["$ORIGIN/../lib/ciq"]:
                problems.append(f"{rel}: DT_RPATH is {rpath or 'absent'} (RUNPATH {runpath}), not $ORIGIN/../lib/ciq")
            # ldd with no help from the environment: every library in the prefix or glibc's.
            out = subprocess.run(["ldd", path], capture_output=True, text=True, env={"PATH": os.environ["PATH"]}).stdout
            for line in out.splitlines():
                m = re.match(r"\s*(\S+) => (\S+)", line)
                if not m:
                    continue
                name, where = m.groups()
                if where == "not":
                    problems.append(f"{rel}: ldd finds no {name}")
                elif not where.startswith(prefix + "/") and not GLIBC.match(name):
                    problems.append(f"{rel}: ldd takes {name} from {where}, outside the prefix")
    for p in problems:
        print("check_relocatable: " + p)
    if not problems:
        print(f"check_relocatable: {prefix}: {len(bundled)} bundled files; nothing needed outside glibc and lib/ciq")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
