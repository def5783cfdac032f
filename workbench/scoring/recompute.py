"""Scorer-side spot recomputation: the task recomputes one point of the submission's claim itself.

A check of kind ``recompute`` names a function in the task's private ``tests/recompute.py``. The
function runs in the task's own environment (PySCF, pw.x, MPB, MuJoCo... as the replay had them),
confined like every reader of evidence (:func:`workbench.reader.client.run_confined`: the sealed evidence
read-only at /evidence, ``tests/recompute.py`` and ``tests/refs/``, no network, the task's memory limit and
the check's time limit). It receives the evidence directory and the check's ``params``, recomputes what
the submission declared (one energy at a submitted geometry, one pw.x point from a submitted input, the
cascade of a submitted ladder), compares with the submitted raw data and returns ``{"score": 0..1,
"rationale": "..."}``::

    # tests/recompute.py (runs in the task's environment; no workbench import needed)
    def energy_at_submitted_geometry(evidence, tolerance=1e-6):
        point = json.loads((evidence / "submission/results/points.json").read_text())[0]
        e = pyscf_energy(point["r"], point["basis"])
        return {"score": float(abs(e - point["energy"]) <= tolerance), "rationale": f"{e} vs {point['energy']}"}

A function that declares a ``seed`` parameter gets a fresh random integer per scoring (recorded in the
leaf's rationale): spot checks choose their points with it, never from the submitted content, which a
submission could steer by changing an insignificant digit until the points checked are the ones it computed.
``from workbench.parsers import ...`` works here too (that one stdlib-only file is placed in the sandbox).

Whose fault: the function's own code failing (a name or import error) withholds the leaf; anything it
raises on the submission's data, or a limit it hits, scores 0 with the reason.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from pydantic import Field

from .. import parsers
from .checks import CHECK_KINDS, CheckKind, _Params
from .faults import InfrastructureFault, name_is_code_fault

HELPERS = "/helpers"

_RUNNER = r"""
import importlib.util, inspect, json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[6])  # workbench/parsers.py, importable as workbench.parsers (a namespace package)
marker = sys.argv[4]
def emit(obj):
    sys.stdout.flush(); sys.stdout.write("\n" + marker + json.dumps(obj) + "\n"); sys.stdout.flush()
try:
    spec = importlib.util.spec_from_file_location("task_recompute", sys.argv[1])
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    fn = getattr(mod, sys.argv[2])
    params = json.loads(sys.argv[3])
    if "seed" in inspect.signature(fn).parameters:
        params["seed"] = int(sys.argv[5])
except BaseException as exc:
    emit({"broken": f"{type(exc).__name__}: {exc}"[:500], "type": type(exc).__name__}); sys.exit(0)
try:
    out = fn(Path("/evidence"), **params)
    emit({"result": out, "seeded": "seed" in params})
except BaseException as exc:
    emit({"raised": f"{type(exc).__name__}: {exc}"[:500], "type": type(exc).__name__})
"""


class Recompute(_Params):
    function: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    params: dict[str, Any] = Field(default_factory=dict)
    timeout_sec: float = Field(default=300.0, gt=0)


def _not_in_the_reader(ev, p: Recompute):
    raise InfrastructureFault("recompute checks run in the task's environment, not in the reader")


CHECK_KINDS["recompute"] = CheckKind(Recompute, _not_in_the_reader)


def run_recompute(task, evidence: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """The outcome of one ``recompute`` check, in the reader's outcome form."""
    from ..reader.client import EVIDENCE, TESTS, reader_limits, run_confined
    from ..sandbox import SandboxSetupError
    from ..sandbox.environments import env_info

    p = Recompute.model_validate({k: v for k, v in spec.items() if k != "kind"})
    script = task.paths.recompute_py
    if not script.is_file():
        return {"error": f"{script}: missing (a recompute check needs it)", "code_fault": True}
    env = env_info(task)
    python = f"{env['dir']}/bin/python" if env["dir"] else "/usr/bin/python3"
    binds = {EVIDENCE: Path(evidence).resolve(), f"{TESTS}/recompute.py": script.resolve()}
    if task.paths.refs.is_dir():
        binds[f"{TESTS}/refs"] = task.paths.refs.resolve()
    binds[f"{HELPERS}/workbench/parsers.py"] = Path(parsers.__file__).resolve()
    marker = f"@@workbench-recompute-{secrets.token_hex(8)}@@"
    seed = secrets.randbits(63)  # which points are checked: drawn per scoring, never from what was submitted
    try:
        done = run_confined([python, "-I", "-c", _RUNNER, f"{TESTS}/recompute.py", p.function, json.dumps(p.params),
                             marker, str(seed), HELPERS], binds=binds,
                            limits=reader_limits(task.config.environment.memory_mb, p.timeout_sec),
                            workdir="/tmp", readonly_same_path=(Path(env["dir"]),) if env["dir"] else (),
                            env={"OMP_NUM_THREADS": str(task.config.environment.cpus)})
    except SandboxSetupError as exc:
        return {"error": f"the recomputation could not start: {exc}", "code_fault": True}
    text = done.stdout.decode("utf-8", "replace")
    line = next((x[len(marker):] for x in reversed(text.splitlines()) if x.startswith(marker)), None)
    if line is None:
        if done.killed_by:
            return {"error": f"the recomputation on the submission's inputs hit {done.killed_by}", "code_fault": False}
        return {"error": f"the recomputation failed: {done.stderr.strip()[-400:]}", "code_fault": True}
    out = json.loads(line)
    seed_used = bool(out.get("seeded"))
    if "broken" in out:
        return {"error": f"tests/recompute.py: {out['broken']}", "code_fault": True}
    if "raised" in out:
        return {"error": f"the recomputation failed on the submission's inputs: {out['raised']}",
                "code_fault": name_is_code_fault(out["type"])}
    res = out["result"]
    try:
        score = float(res["score"])
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"score {score} outside [0, 1]")
        rationale = str(res.get("rationale", ""))[:2000]
        if seed_used:
            rationale += f" [spot-check seed {seed}]"
        return {"score": score, "rationale": rationale, "refs": list(res.get("refs", []))}
    except (KeyError, TypeError, ValueError) as exc:
        return {"error": f"tests/recompute.py {p.function}: returned {str(res)[:200]} ({exc})", "code_fault": True}
