"""Spot recomputation for phc-band-gaps (PRIVATE; runs in the task's environment, confined, no workbench import).

``band_points`` reads the band files of one replay (``replay="public"``: submission/results; ``"secret"``:
the second replay's secret/submission/results, whose inputs the submission could not know) and the inputs
that replay got (replay/input/inputs.json, secret/replay/input/inputs.json: the crystals, resolutions,
band count and path sampling). The scorer solves MPB itself at the resolution a file's name declares, with
the replay's crystal and MPB's default discretisation, at k-points chosen with ``seed`` (a fresh random
integer per scoring, never derived from the submitted files, which a submission could otherwise steer by
changing an insignificant digit until the picks land on the few points it really computed), and compares
every band but the highest with the submitted row.

How many points: ``k`` rows are drawn uniformly, without replacement, from all rows (off Gamma) of all
band files of the replay, and every file with no pick gets one more. A submission that fabricates a
fraction f of its rows escapes with P = C(n - m, k) / C(n, k) <= (1 - f)^k; k = 13 gives P <= 0.0097 for
f = 0.3 (k >= ln 0.01 / ln(1 - f)), and a wholly fabricated file is always checked.

The same solve reproduces MPB's eigenvalues to ~1e-6 c/a (measured: a single-k solve against the same k
inside a full path, <= 5.5e-6); one resolution differs from the next by ~1e-3 c/a, a stand-in solver
(plane waves, formulas) or bands rescaled from another resolution by more. The file's highest band is not
compared: in a path solve MPB's top band can lock onto a higher state (measured: the calibration partial's
band 8 at k = (0.5, 0.1), 8 bands, resolution 32, is 4.7e-3 c/a above the single-k solve while bands 1-7
agree).

For the secret replay the files must also follow the drawn inputs: each structure and polarization the
public replay delivered is there at as many of the drawn resolutions (none other), with at least the
drawn number of bands, on the Γ–X–M–Γ / Γ–M–K–Γ path sampled with the drawn number of interpolated points.
"""

from __future__ import annotations

import csv
import json
import math
import random
import re
from pathlib import Path

FILES = re.compile(r"^bands_(square_tm|triangular_te|triangular_tm)_res(\d+)\.csv$")
MAX_RES, MAX_BANDS, MAX_BYTES = 160, 16, 2_000_000
PUBLISHED = {"resolutions": [16, 32, 64], "num_bands": 8, "interp": 4,
             "square": {"epsilon": 8.9, "radius": 0.2}, "triangular": {"epsilon": 13.0, "radius": 0.48}}
CORNERS = {"square": [(0, 0), (0.5, 0), (0.5, 0.5), (0, 0)], "triangular": [(0, 0), (0, 0.5), (-1 / 3, 1 / 3), (0, 0)]}


def _inputs(evidence: Path, prefix: str) -> dict:
    p = evidence / prefix / "replay" / "input" / "inputs.json"
    return json.loads(p.read_text()) if p.is_file() else dict(PUBLISHED)


def _path(structure: str, interp: int) -> list[tuple[float, float]]:
    """mp.interpolate(interp, corners): the corners with ``interp`` points between successive ones."""
    c, out = CORNERS[structure], []
    for (ax, ay), (bx, by) in zip(c, c[1:], strict=False):
        out += [(ax + (bx - ax) * i / (interp + 1), ay + (by - ay) * i / (interp + 1)) for i in range(interp + 1)]
    return out + [c[-1]]


def _solve(structure: str, pol: str, res: int, ks: list[tuple[float, float]], bands: int, cfg: dict) -> list:
    import meep as mp
    from meep import mpb

    mp.verbosity.mpb = 0
    eps, r = float(cfg[structure]["epsilon"]), float(cfg[structure]["radius"])
    kp = [mp.Vector3(*k) for k in ks]
    if structure == "square":
        ms = mpb.ModeSolver(geometry_lattice=mp.Lattice(size=mp.Vector3(1, 1)),
                            geometry=[mp.Cylinder(r, material=mp.Medium(epsilon=eps))],
                            k_points=kp, resolution=res, num_bands=bands)
    else:
        lattice = mp.Lattice(size=mp.Vector3(1, 1), basis1=mp.Vector3(math.sqrt(3) / 2, 0.5),
                             basis2=mp.Vector3(math.sqrt(3) / 2, -0.5))
        ms = mpb.ModeSolver(geometry_lattice=lattice, geometry=[mp.Cylinder(r, material=mp.air)],
                            default_material=mp.Medium(epsilon=eps), k_points=kp, resolution=res, num_bands=bands)
    ms.run_tm() if pol == "tm" else ms.run_te()
    return [list(f) for f in ms.all_freqs]


def _rows(path: Path) -> tuple[list[str], list[list[float]]]:
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"{path.name}: too large for a band file")
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise ValueError(f"{path.name}: empty")
    return [c.strip() for c in rows[0]], [[float(x) for x in r] for r in rows[1:] if r]


def _stems(results: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for p in results.glob("bands_*_res*.csv"):
        if (m := FILES.match(p.name)):
            out.setdefault(m.group(1), []).append(int(m.group(2)))
    return {k: sorted(v) for k, v in out.items()}


def _follows_inputs(evidence: Path, files: dict, cfg: dict) -> str | None:
    """Why the secret replay's files do not follow its drawn inputs (None when they do)."""
    public = _stems(evidence / "submission" / "results")
    secret = {}
    for kind, res, _header, _rows in files.values():
        secret.setdefault(kind, []).append(res)
    drawn = sorted(int(r) for r in cfg["resolutions"])
    for kind, res in sorted(public.items()):
        got = sorted(secret.get(kind, []))
        if len(got) < min(len(res), len(drawn)):
            return f"{kind}: the public replay delivered resolutions {res}, the secret one {got} (drawn {drawn})"
    for path, (kind, res, header, rows) in files.items():
        if res not in drawn:
            return f"{path.name}: resolution {res} was not drawn ({drawn})"
        nb = sum(1 for c in header if re.fullmatch(r"band\d+", c))
        if nb < int(cfg["num_bands"]):
            return f"{path.name}: {nb} bands, {cfg['num_bands']} drawn"
        ix, iy = header.index("kx"), header.index("ky")
        want = _path(kind.split("_")[0], int(cfg["interp"]))
        got = [(r[ix], r[iy]) for r in rows]
        if len(got) != len(want) or any(math.hypot(a[0] - b[0], a[1] - b[1]) > 1e-5
                                        for a, b in zip(got, want, strict=False)):
            return f"{path.name}: {len(got)} k-points, not the path with {cfg['interp']} interpolated points " \
                   f"between corners ({len(want)} points)"
    return None


def band_points(evidence: Path, tolerance: float = 1e-4, replay: str = "public", k: int = 13,
                seed: int = 0) -> dict:
    """Score 1 when every picked row of the replay's band files equals the scorer's own MPB solve at the
    file's declared resolution (every band but the highest within ``tolerance`` c/a); for the secret
    replay, also when the files follow the drawn inputs."""
    evidence = Path(evidence)
    prefix = "secret" if replay == "secret" else ""
    results = evidence / prefix / "submission" / "results"
    cfg = _inputs(evidence, prefix)
    paths = sorted(p for p in results.glob("bands_*_res*.csv") if FILES.match(p.name))
    if not paths:
        return {"score": 0.0, "rationale": f"no band files {prefix + '/' if prefix else ''}submission/results/"
                                           "bands_<structure>_<pol>_res<R>.csv"}
    files = {}
    for path in paths:
        kind, res = FILES.match(path.name).groups()
        try:
            header, rows = _rows(path)
        except ValueError as exc:
            return {"score": 0.0, "rationale": f"fail: {exc}"}
        band_cols = [i for i, c in enumerate(header) if re.fullmatch(r"band\d+", c)]
        if "kx" not in header or "ky" not in header or not band_cols or not rows or \
                any(len(r) != len(header) for r in rows):
            return {"score": 0.0, "rationale": f"fail: {path.name}: needs kx, ky and band columns in every row"}
        if int(res) > MAX_RES or len(band_cols) > MAX_BANDS:
            return {"score": 0.0, "rationale": f"fail: {path.name}: resolution {res} / {len(band_cols)} bands beyond "
                                               f"what the scorer recomputes ({MAX_RES}, {MAX_BANDS})"}
        files[path] = (kind, int(res), header, rows)
    if replay == "secret" and (why := _follows_inputs(evidence, files, cfg)):
        return {"score": 0.0, "rationale": f"fail: the secret replay's band files do not follow its inputs "
                                           f"({json.dumps(cfg)}): {why}"}
    # the rows to recompute: k drawn from all off-Gamma rows of all files, plus one in every file left out
    rng = random.Random(seed)
    pool = [(p, i) for p, (_, _, h, rows) in files.items()
            for i, r in enumerate(rows) if math.hypot(r[h.index("kx")], r[h.index("ky")]) > 1e-6]
    picks = set(rng.sample(pool, min(k, len(pool))))
    for p in files:
        if not any(q == p for q, _ in picks) and (mine := [x for x in pool if x[0] == p]):
            picks.add(rng.choice(mine))
    notes, worst, ok, n = [], 0.0, True, 0
    for path in paths:
        rows_i = sorted(i for q, i in picks if q == path)
        if not rows_i:
            continue
        kind, res, header, rows = files[path]
        structure, pol = kind.split("_")
        ix, iy = header.index("kx"), header.index("ky")
        band_cols = [i for i, c in enumerate(header) if re.fullmatch(r"band\d+", c)]
        freqs = _solve(structure, pol, res, [(rows[i][ix], rows[i][iy]) for i in rows_i], len(band_cols), cfg)
        compared = band_cols[:-1] or band_cols  # not the top band (see above)
        for i, f in zip(rows_i, freqs, strict=False):
            n += 1
            diff = max(abs(a - rows[i][c]) for a, c in zip(f, compared, strict=False))
            worst = max(worst, diff)
            if diff > tolerance:
                ok = False
                if len(notes) < 4:
                    notes.append(f"{path.name} at k = ({rows[i][ix]:.4f}, {rows[i][iy]:.4f}): "
                                 f"max |Δf| = {diff:.1e} c/a")
    where = "the secret replay's" if replay == "secret" else "the"
    crystal = "; ".join(f"{s} eps {cfg[s]['epsilon']:g}, r {cfg[s]['radius']:g}" for s in ("square", "triangular"))
    return {"score": float(ok), "rationale": ("pass: " if ok else "fail: ") + f"{n} rows of {where} {len(files)} band "
            f"files (chosen with this scoring's seed: {k} at random + one per file left out) recomputed with MPB at "
            f"their declared resolution ({crystal}); worst |Δf| = {worst:.1e} c/a (tolerance {tolerance:g})"
            + ("; " + "; ".join(notes) if notes else ""),
            "refs": [f"{prefix + '/' if prefix else ''}submission/results/{p.name}" for p in paths]}
