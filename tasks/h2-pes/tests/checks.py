"""Task-specific deterministic checks for h2-pes (PRIVATE: run by the scorer, never by the agent).

The headline checks refit Re and De from the raw potential-curve arrays the replay regenerated, so a
summary that merely repeats the paper's numbers earns nothing for them. Whether those arrays came from
PySCF at all is decided elsewhere: the receipt gate (the curve files written by a process that loaded
PySCF), ``cpu_for_claimed_work`` below (that process spent the CPU the declared curves cost) and the spot
recomputation of tests/recompute.py (PySCF re-run at some of the submitted points).
"""

from __future__ import annotations

import re

import numpy as np

from workbench.evidence import MissingEvidence
from workbench.scoring import CheckOutcome, task_check
from workbench.scoring.receipt_checks import receipts_of

HARTREE_TO_CM1 = 219474.6313705
FAMILY = re.compile(r"^(aug-)?cc-pv([dtq56])z$")
CARDINAL = {"d": 2, "t": 3, "q": 4, "5": 5, "6": 6}
# CPU seconds of one RHF + CCSD point of H2 on one core, measured on the reference machine (rounded down;
# see TOLERANCES.md); a 6Z basis is priced like 5Z.
# PySCF's own compiled code: integrals (libcint), J/K builds (libcvhf), AO values (libcgto), its array
# helpers, the AO-to-MO transformation and CC kernels
PYSCF_CODE = ("libcint", "libcvhf", "libcgto", "libnp_helper", "libao2mo", "libcc", "libfci", "libmcscf", "libri")
POINT_CPU_SEC = {(2, False): 0.08, (3, False): 0.15, (4, False): 0.8, (5, False): 7.0, (6, False): 7.0,
                 (2, True): 0.1, (3, True): 0.45, (4, True): 3.5, (5, True): 15.0, (6, True): 15.0}


def _result(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(float(bool(ok)), ("pass: " if ok else "fail: ") + text, refs)


def _pes_files(ev) -> list[str]:
    files = ev.glob("results/pes_*.csv")
    if not files:
        raise MissingEvidence("submission/results/pes_*.csv", "no potential-curve files")
    return files


def _curve(ev, path: str) -> tuple[np.ndarray, np.ndarray]:
    df = ev.read_csv(path)
    for col in ("R_bohr", "E_total"):
        if col not in df.columns:
            raise MissingEvidence(f"{path}:{col}", "column not found")
    r = np.asarray(df["R_bohr"], dtype=float)
    e = np.asarray(df["E_total"], dtype=float)
    order = np.argsort(r)
    return r[order], e[order]


def _largest(ev) -> tuple[dict, str]:
    """The convergence row with the highest cardinal number and the path of its raw curve."""
    df = ev.read_csv("results/convergence.csv")
    for col in ("basis", "cardinal", "E_H"):
        if col not in df.columns:
            raise MissingEvidence(f"submission/results/convergence.csv:{col}", "column not found")
    row = df.sort_values("cardinal", kind="stable").iloc[-1].to_dict()
    path = f"results/pes_{str(row['basis']).strip().lower()}.csv"
    if not ev.exists(path):
        raise MissingEvidence(f"submission/{path}", "no raw curve for the largest basis")
    return row, path


def _refit(r: np.ndarray, e: np.ndarray, path: str) -> tuple[float, float]:
    """Quartic fit over points within 0.1 bohr of the grid minimum (or all, if fewer than 5)."""
    if len(r) < 5 or not (np.isfinite(r).all() and np.isfinite(e).all()):
        raise MissingEvidence(f"submission/{path}", "fewer than 5 finite points: no minimum can be fitted")
    i = int(np.argmin(e))
    sel = np.abs(r - r[i]) <= 0.1 + 1e-9
    if sel.sum() < 5:
        sel = np.ones_like(r, dtype=bool)
    c = np.polyfit(r[sel] - r[i], e[sel], 4)
    fine = np.linspace(r[sel].min(), r[sel].max(), 100001)
    ef = np.polyval(c, fine - r[i])
    k = int(np.argmin(ef))
    return float(fine[k]), float(ef[k])


def _refit_largest(ev) -> tuple[float, float, dict, str]:
    row, path = _largest(ev)
    r, e = _curve(ev, path)
    re_, emin = _refit(r, e, path)
    de = (2 * float(row["E_H"]) - emin) * HARTREE_TO_CM1
    return re_, de, row, path


def _raw_bases(ev, min_points: int = 9) -> dict[str, tuple[int, str]]:
    """{basis: (cardinal, path)} for correlation-consistent bases with a raw curve of enough points."""
    out = {}
    for f in _pes_files(ev):
        name = f.rsplit("/pes_", 1)[1][: -len(".csv")].lower()
        m = FAMILY.match(name)
        if m and len(_curve(ev, f)[0]) >= min_points:
            out[name] = (CARDINAL[m.group(2)], f)
    return out


@task_check
def basis_series(ev, min_bases: int = 3, min_cardinal: int = 4) -> CheckOutcome:
    """Judged from the raw curves that exist, not from what convergence.csv claims."""
    bases = _raw_bases(ev)
    cards = sorted({c for c, _ in bases.values()})
    ok = len(cards) >= min_bases and bool(cards) and max(cards) >= min_cardinal
    return _result(ok, f"raw curves for {sorted(bases)}; cardinal numbers {cards} "
                       f"(need {min_bases}, up to at least {min_cardinal})", [f for _, f in bases.values()])


def _series(ev) -> list[tuple[int, str, float, float]]:
    """(cardinal, basis, Re, De) refit from each raw curve, with E_H per basis from convergence.csv."""
    df = ev.read_csv("results/convergence.csv")
    for col in ("basis", "E_H"):
        if col not in df.columns:
            raise MissingEvidence(f"submission/results/convergence.csv:{col}", "column not found")
    e_h = {str(b).strip().lower(): float(e) for b, e in zip(df["basis"], df["E_H"], strict=False)}
    out = []
    for basis, (card, path) in _raw_bases(ev).items():
        if basis not in e_h:
            continue
        r, e = _curve(ev, path)
        re_, emin = _refit(r, e, path)
        out.append((card, basis, re_, (2 * e_h[basis] - emin) * HARTREE_TO_CM1))
    return sorted(out)


@task_check
def de_converges(ev, min_points: int = 3) -> CheckOutcome:
    """De refit from raw curves rises strictly with the cardinal number (variational, from below)."""
    s = _series(ev)
    des = [de for *_, de in s]
    ok = len(s) >= min_points and all(b > a for a, b in zip(des, des[1:], strict=False))
    return _result(ok, "De by cardinal " + ", ".join(f"{c}: {de:.1f}" for c, _, _, de in s),
                   ["submission/results/convergence.csv"])


@task_check
def re_converges(ev, min_points: int = 3) -> CheckOutcome:
    """Re refit from raw curves falls strictly toward the reference with the cardinal number."""
    s = _series(ev)
    res = [re_ for _, _, re_, _ in s]
    ok = len(s) >= min_points and all(b < a for a, b in zip(res, res[1:], strict=False))
    return _result(ok, "Re by cardinal " + ", ".join(f"{c}: {re_:.5f}" for c, _, re_, _ in s),
                   ["submission/results/convergence.csv"])


@task_check
def pes_files(ev, min_files: int = 3, min_points: int = 9) -> CheckOutcome:
    files = _pes_files(ev)
    problems = []
    for f in files:
        r, e = _curve(ev, f)
        if len(r) < min_points or not (np.isfinite(r).all() and np.isfinite(e).all()):
            problems.append(f"{f}: {len(r)} points, finite={bool(np.isfinite(e).all())}")
    ok = len(files) >= min_files and not problems
    text = f"{len(files)} curve file(s) (need {min_files})" + (": " + "; ".join(problems) if problems else "")
    return _result(ok, text, files)


@task_check
def pes_grid(ev, r_min: float = 1.30, r_max: float = 1.50, min_points: int = 9) -> CheckOutcome:
    problems = []
    files = _pes_files(ev)
    for f in files:
        r, e = _curve(ev, f)
        if len(r) < min_points:
            problems.append(f"{f}: {len(r)} points < {min_points}")
            continue
        if r.min() > r_min + 1e-6 or r.max() < r_max - 1e-6:
            problems.append(f"{f}: spans {r.min():.3f}-{r.max():.3f} bohr, not {r_min}-{r_max}")
        i = int(np.argmin(e))
        if i in (0, len(e) - 1):
            problems.append(f"{f}: the minimum is at the grid edge (R = {r[i]:.3f})")
    return _result(not problems, "; ".join(problems) or "every curve brackets its minimum", files)


@task_check
def scf_converged(ev) -> CheckOutcome:
    """Every point of every curve flags convergence; a curve without points has nothing converged."""
    files = _pes_files(ev)
    bad = []
    for f in files:
        df = ev.read_csv(f)
        if "scf_converged" not in df.columns:
            raise MissingEvidence(f"{f}:scf_converged", "column not found")
        flags = df["scf_converged"].astype(str).str.strip().str.lower()
        if len(flags) == 0:
            bad.append(f"{f} (no points)")
        elif not flags.isin(["true", "1", "yes"]).all():
            bad.append(f)
    return _result(not bad, f"unconverged points in {bad}" if bad else "all points converged", files)


@task_check
def refit_re(ev, target: float, abs_tol: float) -> CheckOutcome:
    re_, _, row, path = _refit_largest(ev)
    dev = abs(re_ - target)
    return _result(dev <= abs_tol, f"Re refit from {path} ({row['basis']}) = {re_:.5f} bohr vs {target} "
                                   f"(|Δ| = {dev:.5f}, tolerance {abs_tol})", [path])


@task_check
def refit_de(ev, target: float, rel_tol: float) -> CheckOutcome:
    _, de, row, path = _refit_largest(ev)
    rel = abs(de - target) / target
    return _result(rel <= rel_tol, f"De refit from {path} and E_H = {row['E_H']} is {de:.1f} cm-1 vs {target} "
                                   f"({100 * rel:.2f} %, tolerance {100 * rel_tol:.2f} %)",
                   [path, "submission/results/convergence.csv"])


@task_check
def summary_matches_raw(ev, re_tol: float = 0.001, de_rel_tol: float = 0.002) -> CheckOutcome:
    re_, de, row, path = _refit_largest(ev)
    s = ev.read_json("results/summary.json")
    try:
        s_re, s_de = float(s["Re_bohr"]), float(s["De_cm1"])
    except (KeyError, TypeError, ValueError):
        return _result(False, "summary.json lacks numeric Re_bohr/De_cm1", ["submission/results/summary.json"])
    ok = abs(s_re - re_) <= re_tol and abs(s_de - de) <= de_rel_tol * abs(de)
    return _result(ok, f"summary Re {s_re}, De {s_de} vs refit of raw data Re {re_:.5f}, De {de:.1f}",
                   ["submission/results/summary.json", path])


@task_check
def variational_bound(ev, e_exact: float = -1.1744757, slack: float = 1e-6) -> CheckOutcome:
    files = _pes_files(ev)
    curves = {f: _curve(ev, f)[1] for f in files}
    empty = sorted(f for f, e in curves.items() if len(e) == 0)
    if empty:
        return _result(False, f"curve(s) without points: {empty}", files)
    lowest = min(float(np.min(e)) for e in curves.values())
    ok = bool(np.isfinite(lowest)) and lowest >= e_exact - slack
    return _result(ok, f"lowest energy {lowest:.7f} Eh {'>=' if ok else '<'} exact {e_exact} Eh", files)


@task_check
def cpu_for_claimed_work(ev, code: tuple[str, ...] = PYSCF_CODE, fraction: float = 0.05,
                         measurable_sec: float = 0.2) -> CheckOutcome:
    """CPU sampled inside PySCF's own compiled code (integrals, J/K builds, its array helpers: ``code``) is at
    least ``fraction`` of the CPU time the declared curves cost.

    The claim is read from the raw curves themselves (points per correlation-consistent basis, priced by
    :data:`POINT_CPU_SEC`, whole-process CPU on the reference machine), the work from the replay's receipts:
    where each process's instructions were. Curves copied out of a cache by a process that imported PySCF,
    ran a token STO-3G check and then kept the CPU busy with NumPy (padding) have no CPU in these libraries
    behind them. Not counted, since a padding loop could use them too: the BLAS and OpenMP runtimes PySCF
    bundles, NumPy's and SciPy's (the reference's curves spend about a fifth of their price in ``code``).
    A claim whose share is under ``measurable_sec`` (20 samples at 99 Hz) is not asked for: such curves are
    cheap to compute for real, and the spot recomputation checks their points."""
    bases = {}
    for f in _pes_files(ev):
        name = f.rsplit("/pes_", 1)[1][: -len(".csv")].lower()
        m = FAMILY.match(name)
        if m:
            bases[name] = (CARDINAL[m.group(2)], bool(m.group(1)), len(_curve(ev, f)[0]))
    claimed = sum(n * POINT_CPU_SEC[(card, aug)] for card, aug, n in bases.values())
    cpu = receipts_of(ev).cpu_in(library=list(code))
    need = fraction * claimed
    ok = bool(bases) and claimed > 0 and (cpu >= need or need < measurable_sec)
    detail = ", ".join(f"{b}: {n} points" for b, (_, _, n) in sorted(bases.items())) or "no cc-pVXZ curve"
    # a pass does not quote the measured CPU time, so two replays of the same work score identically
    used = (f"at least the {need:.2f} CPU s needed" if ok and need >= measurable_sec else
            f"no CPU is asked of it (the {need:.2f} s needed are too few to sample)" if ok else
            f"{cpu:.2f} CPU s, less than the {need:.2f} needed")
    return _result(ok, f"PySCF's own code ({', '.join(code)}) used {used}: the declared curves ({detail}) cost "
                       f"about {claimed:.1f} CPU s, {fraction:g} of that needed inside it",
                   ["replay/receipts.json", *ev.glob("results/pes_*.csv")])


@task_check
def inputs_followed(ev, replay: str = "public", re_tol: float = 0.001, de_rel_tol: float = 0.002) -> CheckOutcome:
    """The replay computed what its inputs.json held. ``replay="secret"`` reads the second replay, whose bond
    lengths were drawn for it alone: every correlation-consistent curve holds exactly the drawn bond lengths
    (4 decimals), and summary.json's Re and De are the refit of that replay's largest curve (its E_H)."""
    pre = "secret/" if replay == "secret" else ""
    top = f"{pre}submission"
    want = sorted(round(float(x), 4) for x in ev.read_json(f"{pre}replay/input/inputs.json")["R_bohr"])
    files = [f for f in ev.glob(f"{top}/results/pes_*.csv")
             if FAMILY.match(f.rsplit("/pes_", 1)[1][: -len(".csv")].lower())]
    if not files:
        raise MissingEvidence(f"{top}/results/pes_*.csv", "no correlation-consistent curve")
    problems = []
    for f in files:
        r, _ = _curve(ev, f)
        if sorted(round(float(x), 4) for x in r) != want:
            problems.append(f"{f.rsplit('/', 1)[1]}: bond lengths {sorted(r.tolist())[:4]}... are not inputs.json's "
                            f"{want[:4]}...")
    detail = ""
    if not problems:
        df = ev.read_csv(f"{top}/results/convergence.csv")
        row = df.sort_values("cardinal", kind="stable").iloc[-1].to_dict()
        path = f"{top}/results/pes_{str(row['basis']).strip().lower()}.csv"
        r, e = _curve(ev, path)
        re_, emin = _refit(r, e, path)
        de = (2 * float(row["E_H"]) - emin) * HARTREE_TO_CM1
        s = ev.read_json(f"{top}/results/summary.json")
        try:
            s_re, s_de = float(s["Re_bohr"]), float(s["De_cm1"])
        except (KeyError, TypeError, ValueError):
            s_re = s_de = float("nan")
        if not (abs(s_re - re_) <= re_tol and abs(s_de - de) <= de_rel_tol * abs(de)):
            problems.append(f"summary Re {s_re}, De {s_de} vs refit Re {re_:.5f}, De {de:.1f}")
        detail = f"; summary Re {s_re}, De {s_de} = refit of {path.rsplit('/', 1)[1]}"
    return _result(not problems, "; ".join(problems[:3]) or
                   f"{replay} replay: {len(files)} curves at inputs.json's {len(want)} bond lengths{detail}",
                   [f"{top}/results/", f"{pre}replay/input/inputs.json"])
