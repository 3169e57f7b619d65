"""Writes stencil-h200-constrained/landscape.json from stencil-h200's: the
points that satisfy the constrained space's `constraints:` (block_x *
block_y <= 1024), and the space identity ciq computes for a space with
constraints (engine/config/Space.cpp: SHA-256 of {"controls": [...],
"constraints": [...]} as compact JSON with sorted keys).

Usage: python3 bench/landscapes/make_constrained.py   (from the repository root)
"""
import hashlib
import json

import yaml

SRC = "bench/landscapes/stencil-h200"
DST = "bench/landscapes/stencil-h200-constrained"


def identity(space):
    controls = []
    for c in space["controls"]:
        render = next(k for k in ("ptxas", "nvcc", "define", "acf") if k in c)
        values = [str(v) for v in c["choice"]] if "choice" in c else [str(c["literal"])]
        controls.append({"name": c["name"], "render": render, "option": c[render], "stage": "ptxas",
                         "values": values, "can_unset": not c.get("required", False)})
    doc = {"controls": controls, "constraints": space["constraints"]}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def main():
    space = yaml.safe_load(open(DST + "/space.yaml"))
    bx = [int(v) for v in space["controls"][0]["choice"]]
    by = [int(v) for v in space["controls"][1]["choice"]]
    land = json.load(open(SRC + "/landscape.json"))
    # An unset control makes the constraint not apply (docs/config.md, "Constraints").
    keep = [p for p in land["points"]
            if p["point"][0] < 0 or p["point"][1] < 0 or bx[p["point"][0]] * by[p["point"][1]] <= 1024]
    land["name"] = "stencil-h200-constrained"
    land["space_identity"] = identity(space)
    land["recipe"] = dict(land["recipe"], derived_from="stencil-h200: its points that satisfy block_x * block_y <= 1024")
    land["points"] = keep
    json.dump(land, open(DST + "/landscape.json", "w"), indent=1)
    print(f"{len(keep)} of {len(json.load(open(SRC + '/landscape.json'))['points'])} points kept")


if __name__ == "__main__":
    main()
