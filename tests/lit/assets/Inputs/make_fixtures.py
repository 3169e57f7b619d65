#!/usr/bin/env python3
"""Builds the release layouts ciq's asset tests read: search-space mirrors
(good and broken), a release-server tree (search spaces and booster packs,
with faults), and booster-pack zips (good, tampered, and malicious).

ACFs are opaque bytes to ciq, so random bytes stand in for them: what is
tested is selection, hashing, caching, verification and refusal.
"""
import hashlib
import json
import os
import random
import shutil
import sys
import zipfile

OUT = sys.argv[1]
rng = random.Random(8)

SPACE_DEFAULT = """# test space
name: ptxas-13.0-default
compiler: ptxas
compiler_version: "13.0"
description: test release space (default)
controls:
  - name: opt-level
    ptxas: "--opt-level={}"
    choice: [1, 2, 3]
"""
SPACE_ATT = SPACE_DEFAULT.replace("default", "att").replace("[1, 2, 3]", "[2, 3]")
SPACE_NVCC = """name: nvcc-13.0-default
compiler: nvcc
compiler_version: "13.0"
description: test release space (nvcc)
controls:
  - name: ftz
    nvcc: "--ftz={}"
    choice: ["true", "false"]
"""


def sha(b):
    return hashlib.sha256(b).hexdigest()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def entry(compiler, version, variant, filename, data, fmt="yaml"):
    return {"compiler": compiler, "compiler_version": version, "variant": variant,
            "filename": filename, "sha256": sha(data), "size_bytes": len(data),
            "search_space_format": fmt, "description": f"{compiler} {version} {variant}"}


def space_release(folder, tag, files, extra_entries=(), manifest_extra=None, skip=()):
    """files: list of (compiler, version, variant, filename, bytes, format)."""
    entries = [entry(*f) for f in files] + list(extra_entries)
    manifest = {"manifest_format": "1.0.0", "tag": tag, "generated_at": "2025-09-01T00:00:00Z",
                "entries": entries}
    if manifest_extra:
        manifest.update(manifest_extra)
    write(os.path.join(folder, "manifest.json"), json.dumps(manifest, indent=2))
    for f in files:
        if f[3] not in skip:
            write(os.path.join(folder, f[3]), f[4])


BIN = bytes(rng.getrandbits(8) for _ in range(512))
GOOD = [("ptxas", "13.0", "default", "ptxas-13.0-default.yaml", SPACE_DEFAULT.encode(), "yaml"),
        ("ptxas", "13.0", "att", "ptxas-13.0-att.yaml", SPACE_ATT.encode(), "yaml"),
        ("nvcc", "13.0", "default", "nvcc-13.0-default.yaml", SPACE_NVCC.encode(), "yaml"),
        ("ptxas", "13.0", "nvidia", "ptxas-13.0-nvidia.bin", BIN, "nvidia-encrypted")]
TAG = "search-spaces-2025.09"

# Offline mirrors.
space_release(f"{OUT}/mirror", TAG, GOOD)
os.makedirs(f"{OUT}/mirror-empty", exist_ok=True)
space_release(f"{OUT}/mirror-missing", TAG, GOOD, skip=("ptxas-13.0-att.yaml",))
space_release(f"{OUT}/mirror-dup", TAG, GOOD, extra_entries=[entry(*GOOD[0])])
space_release(f"{OUT}/mirror-unknown", TAG, GOOD, manifest_extra={"signature": "x"})
space_release(f"{OUT}/mirror-corrupt", TAG, GOOD)
write(f"{OUT}/mirror-corrupt/ptxas-13.0-default.yaml", SPACE_DEFAULT.replace("[1, 2, 3]", "[0, 1]"))

# Release server: acme/spaces.
srv = f"{OUT}/srv"
space_release(f"{srv}/acme/spaces/search-spaces-2025.08", "search-spaces-2025.08", GOOD[:1])
write(f"{srv}/acme/spaces/search-spaces-2025.08.release.json", json.dumps({"published_at": "2025-08-01T00:00:00Z"}))
space_release(f"{srv}/acme/spaces/{TAG}", TAG, GOOD)
write(f"{srv}/acme/spaces/{TAG}.release.json", json.dumps({"published_at": "2025-09-01T00:00:00Z"}))
space_release(f"{srv}/acme/spaces/search-spaces-2025.10-rc1", "search-spaces-2025.10-rc1", GOOD[:1])
write(f"{srv}/acme/spaces/search-spaces-2025.10-rc1.release.json",
      json.dumps({"published_at": "2025-10-01T00:00:00Z", "prerelease": True}))
# The repository's own latest release is not a search-space release.
write(f"{srv}/acme/spaces/tools-v2/README.txt", "not a search space")
write(f"{srv}/acme/spaces/tools-v2.release.json", json.dumps({"published_at": "2025-11-01T00:00:00Z"}))

# A release whose downloads fail in every way the network can fail.
BROKEN = "search-spaces-broken"
broken_files = [("ptxas", "13.0", v, f"ptxas-13.0-{v}.yaml", SPACE_DEFAULT.replace("default", v).encode(), "yaml")
                for v in ["corrupt", "missing", "stall", "trunc", "flaky"]]
space_release(f"{srv}/acme/spaces/{BROKEN}", BROKEN, broken_files)
write(f"{srv}/acme/spaces/{BROKEN}.release.json", json.dumps({"published_at": "2024-01-01T00:00:00Z"}))
# Same size, other bytes: only the SHA-256 tells.
write(f"{srv}/acme/spaces/{BROKEN}/ptxas-13.0-corrupt.yaml", broken_files[0][4].replace(b"[1, 2, 3]", b"[1, 2, 4]"))
faults = {f"acme/spaces/{BROKEN}/ptxas-13.0-missing.yaml": "404",
          f"acme/spaces/{BROKEN}/ptxas-13.0-stall.yaml": "stall",
          f"acme/spaces/{BROKEN}/ptxas-13.0-trunc.yaml": "truncate",
          f"acme/spaces/{BROKEN}/ptxas-13.0-flaky.yaml": "flaky"}

# Booster packs.
BTAG = "booster-packs-2025.09"


def acf(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def make_pack(pack_id, acfs, cuda="13.0", stage="ptxas", zip_names=None, catalog_acfs=None):
    """Returns (zip bytes, catalog entry). zip_names overrides the entry names in the zip."""
    manifest = json.dumps({"pack_id": pack_id, "acfs": [a for a, _ in acfs]}).encode()
    path = f"{OUT}/tmp-{pack_id}.zip"
    os.makedirs(OUT, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("booster-pack-manifest.json", manifest)
        for i, (name, data) in enumerate(acfs):
            z.writestr(zipfile.ZipInfo((zip_names or {}).get(name, f"acfs/{name}")), data)
        z.writestr("README.md", "not part of the pack contract\n")
    data = open(path, "rb").read()
    os.remove(path)
    listed = catalog_acfs or [{"filename": n, "sha256": sha(d), "size_bytes": len(d)} for n, d in acfs]
    return data, {
        "pack_id": pack_id, "artifact_name": f"{pack_id}.zip", "artifact_sha256": sha(data),
        "artifact_size_bytes": len(data), "manifest_path": "booster-pack-manifest.json",
        "manifest_sha256": sha(manifest), "acf_count": len(listed), "acfs": listed,
        "display_name": pack_id.replace("-", " ").title(), "pack_type": "gemm",
        "description": "test pack", "cuda_version": cuda, "controls_stage": stage,
        "supported_gpus": ["sm_90"], "validation_summary": {"kernels": 3}}


gemm = [("gemm-a.acf", acf(300)), ("gemm-b.acf", acf(301)), ("gemm-c.acf", acf(302))]
packs = [make_pack("gemm-pack", gemm),
         make_pack("nvcc-pack", [("n.acf", acf(64))], stage="nvcc"),
         make_pack("future-pack", [("f.acf", acf(64))], cuda="99.1"),
         make_pack("evil-abs", [("e.acf", acf(64))], zip_names={"e.acf": "/tmp/ciq-evil-abs.acf"}),
         make_pack("evil-dotdot", [("e.acf", acf(64))], zip_names={"e.acf": "acfs/../../ciq-evil.acf"})]
tampered_data, tampered = make_pack("tampered-pack", [("t.acf", acf(64))])
tampered["acfs"][0]["sha256"] = "0" * 64   # the catalog promises other bytes
packs.append((tampered_data, tampered))
catalog = {"schema_version": "1.0", "catalog_version": "2025.09.1", "release_tag": BTAG,
           "packs": [p for _, p in packs]}
catalog_bytes = json.dumps(catalog, indent=2).encode()


def booster_release(folder, corrupt_zip=None):
    write(f"{folder}/booster-pack-catalog.json", catalog_bytes)
    sums = [f"{sha(catalog_bytes)}  booster-pack-catalog.json"]
    for data, p in packs:
        write(f"{folder}/{p['artifact_name']}", data)
        sums.append(f"{p['artifact_sha256']}  {p['artifact_name']}")
    write(f"{folder}/SHA256SUMS.txt", "\n".join(sums) + "\n")


booster_release(f"{OUT}/bmirror")
booster_release(f"{srv}/acme/boosters/{BTAG}")
write(f"{OUT}/gemm-acfs.txt", "\n".join(f"{sha(d)}  {n}" for n, d in gemm) + "\n")
write(f"{srv}/faults.json", json.dumps(faults, indent=2))
