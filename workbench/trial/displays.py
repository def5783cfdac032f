"""What each stage produced, as tables and figures an expert wants to read (used by the notebooks).

Kernel-side: nothing here imports papermill, nbformat or jsonschema, so a stage notebook starts fast.
``glue`` writes scrapbook's display format directly (scrapbook 0.5 itself imports papermill).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..io import iter_files, sha256_file
from ..paths import TrialPaths
from ..session.ledger import read_delivery, read_usage

SCRAP_MIME = "application/scrapbook.scrap.json+json"


def executed_by_workbench() -> bool:
    """True inside a kernel the workbench started to execute a stage (interactive widgets are pointless there)."""
    import os

    return "WORKBENCH_KERNEL_PARENT" in os.environ


def glue(name: str, data: Any) -> None:
    """Record ``data`` in the executed notebook so ``scrapbook.read_notebook(...).scraps`` finds it."""
    from IPython.display import display

    payload = {"name": name, "data": json.loads(json.dumps(data, default=str)), "encoder": "json", "version": 1}
    display({SCRAP_MIME: payload}, metadata={"scrapbook": {"name": name, "data": True, "display": False}},
            raw=True)


def file_tree(root: str | Path, limit: int = 500):
    """Files under root with size and sha256 (symlinks show their target)."""
    import os

    import pandas as pd

    root = Path(root)
    rows = []
    for p in iter_files(root):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            rows.append({"path": rel, "bytes": None, "sha256": f"-> {os.readlink(p)}"})
        elif p.is_file():
            rows.append({"path": rel, "bytes": p.stat().st_size, "sha256": sha256_file(p)[:16]})
        if len(rows) >= limit:
            rows.append({"path": f"... (first {limit} shown)", "bytes": None, "sha256": ""})
            break
    return pd.DataFrame(rows, columns=["path", "bytes", "sha256"])


def _record_table(data: dict[str, Any]):
    import pandas as pd

    return pd.DataFrame([{"field": k, "value": v if not isinstance(v, dict | list) else json.dumps(v)}
                         for k, v in data.items()]).set_index("field")


def delivery_table(trial_dir: str | Path):
    tp = TrialPaths(Path(trial_dir))
    delivery = read_delivery(tp)
    data = delivery.model_dump() if delivery else {}
    usage = read_usage(tp)
    if usage is not None:
        data.update({f"usage.{k}": v for k, v in usage.model_dump(exclude_none=True).items()})
    return _record_table(data)


def trajectory_table(trial_dir: str | Path, last: int = 20):
    import pandas as pd

    tp = TrialPaths(Path(trial_dir))
    rows = [json.loads(line) for line in tp.trajectory.read_text().splitlines() if line.strip()]
    df = pd.DataFrame(rows)
    return df.tail(last) if not df.empty else df


def provenance_table(trial_dir: str | Path):
    tp = TrialPaths(Path(trial_dir))
    prov = json.loads(tp.provenance.read_text())
    hidden = ("source_hashes_before", "source_hashes_after")
    data = {k: v for k, v in prov.items() if k not in hidden}
    data["sources"] = f"{len(prov['source_hashes_before'])} files, digest {prov['sources_digest'][:16]}"
    return _record_table(data)


def log_tail(trial_dir: str | Path, stream: str = "stdout", lines: int = 40) -> str:
    tp = TrialPaths(Path(trial_dir))
    path = tp.stdout_log if stream == "stdout" else tp.stderr_log
    text = path.read_text(errors="replace").splitlines()
    head = f"--- {stream}: last {min(lines, len(text))} of {len(text)} lines ---"
    return "\n".join([head, *text[-lines:]])


def leaf_table(trial_dir: str | Path):
    import pandas as pd

    from ..scoring.results import read_scores

    scores = read_scores(TrialPaths(Path(trial_dir)), required=True)
    df = pd.DataFrame([lf.model_dump() for lf in scores.leaves])
    order = {"modeling": 0, "execution": 1, "validation": 2}
    df = df.sort_values("phase", key=lambda s: s.map(order), kind="stable")
    cols = ["phase", "id", "title", "status", "score", "effective_weight", "method", "rationale"]
    return df[cols].reset_index(drop=True)


def earned_weight_chart(trial_dir: str | Path):
    """Earned vs available effective weight per phase (a matplotlib Figure, renders offline)."""
    from matplotlib.figure import Figure

    from ..scoring.results import read_scores

    s = read_scores(TrialPaths(Path(trial_dir)), required=True)
    phases = list(s.phase_weights)
    fig = Figure(figsize=(7, 2.6))
    ax = fig.subplots()
    ax.barh(phases, [s.phase_weights[p] for p in phases], color="#dddddd", label="available")
    ax.barh(phases, [s.phases[p] for p in phases], color="#3b7dd8", label="earned")
    for i, p in enumerate(phases):
        share = f" ({s.phases[p] / s.phase_weights[p]:.0%})" if s.phase_weights[p] else ""
        ax.text(s.phase_weights[p], i, f" {s.phases[p]:.3f} of {s.phase_weights[p]:.3f}{share}", va="center",
                fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(s.phase_weights.values()) * 1.35 or 1)
    ax.set_xlabel("effective weight")
    ax.set_title(f"R = {s.R:.3f}  full = {s.full}  coverage = {s.coverage:.2f}", fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def _evidence_seen(record: Path | None) -> str:
    """The evidence a judge record says the judge was shown (path and hash), or why it cannot say."""
    from ..errors import WorkbenchError
    from ..scoring.judge.leaf import read_judge_record

    if record is None or not record.is_file():
        return ""
    try:
        seen = read_judge_record(record).evidence
    except WorkbenchError as exc:
        return f"(unreadable: {str(exc).splitlines()[0]})"
    return "\n".join(f"{p} ({h[:12]})" for p, h in seen.items())


def judge_audit(trial_dir: str | Path):
    """Per judged leaf: score, the judge's reason and checks, the evidence it was shown (path and hash),
    whether the verdict came from the cache, and its tokens: what an expert needs to audit it."""
    import pandas as pd

    from ..scoring.results import read_scores

    tp = TrialPaths(Path(trial_dir))
    scores = read_scores(tp, required=True)
    rows = []
    for lf in scores.leaves:
        if not lf.judge:
            continue
        record = tp.root / lf.judge["transcript"] if lf.judge.get("transcript") else None
        rows.append({"id": lf.id, "phase": lf.phase, "status": lf.status, "score": lf.score,
                     "reason": lf.rationale, "checks": "; ".join(lf.judge.get("checks", [])),
                     "evidence seen": _evidence_seen(record),
                     "cached": lf.judge.get("cached"), "tokens": (lf.usage or {}).get("prompt_tokens", 0)
                     + (lf.usage or {}).get("completion_tokens", 0), "error": lf.error})
    return pd.DataFrame(rows, columns=["id", "phase", "status", "score", "reason", "checks", "evidence seen",
                                       "cached", "tokens", "error"])


def png(fig, dpi: int = 110):
    """A matplotlib Figure as an embedded PNG (renders in JupyterLab and in offline HTML exports)."""
    import io

    from IPython.display import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return Image(data=buf.getvalue(), format="png")


def review_queue(summary: dict[str, Any]):
    """The review stage's queue as a table."""
    import pandas as pd

    rows = [{"id": q["id"], "phase": q["phase"], "status": q["status"], "method": q["method"],
             "effective_weight": q["effective_weight"], "requirement": q["title"],
             "evidence": ", ".join(q["evidence_refs"])} for q in summary["queue"]]
    return pd.DataFrame(rows, columns=["id", "phase", "status", "method", "effective_weight", "requirement",
                                       "evidence"])


def evidence_images(trial_dir: str | Path, refs: list[str], max_images: int = 4) -> list[Path]:
    """Image files among a leaf's evidence references, for previews next to the review queue."""
    from ..evidence import Evidence, MissingEvidence

    ev = Evidence(TrialPaths(Path(trial_dir)).evidence)
    out = []
    for ref in refs:
        if ref.lower().endswith((".png", ".jpg", ".jpeg", ".svg")):
            try:
                out.append(ev.resolve(ref))
            except MissingEvidence:
                continue
        if len(out) >= max_images:
            break
    return out
