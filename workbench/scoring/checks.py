"""Deterministic checks: one registry of check kinds, plus task-specific checks from tests/checks.py.

A rubric leaf's ``check`` is ``{"kind": NAME, ...params}``. Each kind declares its parameters as a
pydantic model (so a typo in a rubric is caught by ``workbench task check``) and a function that
reads the evidence and returns a :class:`CheckOutcome`. A missing input raises
:class:`~workbench.evidence.MissingEvidence`, which zeroes only the leaf that needed it.

Tolerances: ``target`` with ``abs_tol`` and/or ``rel_tol`` passes when
``|value - target| <= max(abs_tol, rel_tol * |target|)``; ``min``/``max`` bound a value;
``one_of`` lists accepted values (strings compare case-insensitively).
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import WorkbenchError, unknown
from ..evidence import Evidence, MissingEvidence, normalize, read_links, read_manifest
from ..replay.data_in_code import scan_tree


@dataclass
class CheckOutcome:
    score: float
    rationale: str
    evidence_refs: list[str] = field(default_factory=list)


class CheckSpecError(WorkbenchError):
    """A rubric's check spec is malformed (a rubric bug, never the submission's fault)."""


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Comparison(_Params):
    target: float | str | bool | None = None
    abs_tol: float | None = Field(default=None, ge=0)
    rel_tol: float | None = Field(default=None, ge=0)
    min: float | None = None
    max: float | None = None
    one_of: list[Any] | None = None

    @model_validator(mode="after")
    def _something_to_compare(self):
        if self.target is None and self.min is None and self.max is None and self.one_of is None:
            raise ValueError("give target, min, max or one_of")
        return self

    def judge(self, value: Any) -> tuple[bool, str]:
        if self.one_of is not None:
            norm = [str(v).strip().lower() for v in self.one_of]
            ok = str(value).strip().lower() in norm
            return ok, f"{value!r} {'is' if ok else 'is not'} one of {self.one_of}"
        if isinstance(self.target, str | bool):
            ok = value == self.target
            return ok, f"{value!r} {'==' if ok else '!='} {self.target!r}"
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            return False, f"{str(value)[:40]!r} is not a number"
        if not math.isfinite(x):
            return False, f"{value!r} is not finite"
        parts, ok = [], True
        if self.target is not None:
            tol = max(self.abs_tol or 0.0, (self.rel_tol or 0.0) * abs(float(self.target)))
            dev = abs(x - float(self.target))
            ok &= dev <= tol
            parts.append(f"{x:.6g} vs target {float(self.target):.6g}: |Δ| = {dev:.3g} "
                         f"{'<=' if dev <= tol else '>'} tolerance {tol:.3g}")
        if self.min is not None:
            ok &= x >= self.min
            parts.append(f"{x:.6g} {'>=' if x >= self.min else '<'} min {self.min:.6g}")
        if self.max is not None:
            ok &= x <= self.max
            parts.append(f"{x:.6g} {'<=' if x <= self.max else '>'} max {self.max:.6g}")
        return ok, "; ".join(parts)


def _outcome(ok: bool, text: str, refs: list[str]) -> CheckOutcome:
    return CheckOutcome(1.0 if ok else 0.0, ("pass: " if ok else "fail: ") + text, refs)


def _lookup(data: Any, key: str, path: str) -> Any:
    cur = data
    for part in key.split("."):
        if isinstance(cur, list) and re.fullmatch(r"-?\d+", part):
            idx = int(part)
            if -len(cur) <= idx < len(cur):
                cur = cur[idx]
                continue
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
            continue
        raise MissingEvidence(f"{normalize(path)}:{key}", "key not found")
    return cur


# --- kinds -------------------------------------------------------------------------------------

class FileExists(_Params):
    path: str
    min_files: int = Field(default=1, ge=1)
    min_bytes: int = Field(default=1, ge=0)


def file_exists(ev: Evidence, p: FileExists) -> CheckOutcome:
    matches = ev.glob(p.path) if any(c in p.path for c in "*?[") else ([normalize(p.path)] if ev.exists(p.path) else [])
    sized = [m for m in matches if ev.resolve(m).is_file() and ev.resolve(m).stat().st_size >= p.min_bytes]
    if not sized:
        raise MissingEvidence(normalize(p.path), f"no file of at least {p.min_bytes} bytes")
    ok = len(sized) >= p.min_files
    return _outcome(ok, f"{len(sized)} file(s) match {p.path} (need {p.min_files})", sized)


class JsonValue(Comparison):
    path: str
    key: str


def json_value(ev: Evidence, p: JsonValue) -> CheckOutcome:
    value = _lookup(ev.read_json(p.path), p.key, p.path)
    ok, text = p.judge(value)
    return _outcome(ok, f"{p.key} = {text}", [normalize(p.path)])


class CsvValue(Comparison):
    path: str
    column: str
    row: int | None = None
    where: dict[str, Any] | None = None


def _select_row(df, p: CsvValue):
    if p.where:
        mask = None
        for col, want in p.where.items():
            if col not in df.columns:
                raise MissingEvidence(f"{normalize(p.path)}:{col}", "column not found")
            m = df[col].astype(str).str.strip().str.lower() == str(want).strip().lower()
            mask = m if mask is None else mask & m
        rows = df[mask]
        if rows.empty:
            raise MissingEvidence(normalize(p.path), f"no row where {p.where}")
        return rows.iloc[0]
    idx = -1 if p.row is None else p.row
    if not (-len(df) <= idx < len(df)):
        raise MissingEvidence(normalize(p.path), f"no row {idx}")
    return df.iloc[idx]


def csv_value(ev: Evidence, p: CsvValue) -> CheckOutcome:
    df = ev.read_csv(p.path)
    if p.column not in df.columns:
        raise MissingEvidence(f"{normalize(p.path)}:{p.column}", "column not found")
    value = _select_row(df, p)[p.column]
    ok, text = p.judge(value.item() if hasattr(value, "item") else value)
    return _outcome(ok, f"{p.column} = {text}", [normalize(p.path)])


class ArrayShape(_Params):
    path: str
    key: str | None = None
    shape: list[int | None] | None = None
    min_rows: int | None = Field(default=None, ge=0)
    finite: bool = True


def array_shape(ev: Evidence, p: ArrayShape) -> CheckOutcome:
    import numpy as np

    arr = ev.load_array(p.path, p.key)
    problems = []
    if p.shape is not None and (len(arr.shape) != len(p.shape)
                                or any(w is not None and w != s for w, s in zip(p.shape, arr.shape, strict=False))):
        problems.append(f"shape {tuple(arr.shape)} does not match {p.shape}")
    if p.min_rows is not None and (arr.ndim == 0 or arr.shape[0] < p.min_rows):
        problems.append(f"{arr.shape[0] if arr.ndim else 0} rows < {p.min_rows}")
    if p.finite and arr.dtype.kind in "fc" and not np.isfinite(arr).all():
        problems.append("contains NaN or infinite values")
    text = f"array {tuple(arr.shape)}" + (": " + "; ".join(problems) if problems else "")
    return _outcome(not problems, text, [normalize(p.path)])


class Monotone(_Params):
    path: str
    column: str | None = None
    key: str | None = None
    order_by: str | None = None
    direction: Literal["increasing", "decreasing"]
    strict: bool = False
    min_points: int = Field(default=3, ge=2)

    @model_validator(mode="after")
    def _one_source(self):
        if (self.column is None) == (self.key is None):
            raise ValueError("give exactly one of column (CSV) or key (JSON list)")
        return self


def monotone(ev: Evidence, p: Monotone) -> CheckOutcome:
    if p.column is not None:
        df = ev.read_csv(p.path)
        for col in [p.column] + ([p.order_by] if p.order_by else []):
            if col not in df.columns:
                raise MissingEvidence(f"{normalize(p.path)}:{col}", "column not found")
        if p.order_by:
            df = df.sort_values(p.order_by, kind="stable")
        values = df[p.column].tolist()
    else:
        values = _lookup(ev.read_json(p.path), p.key or "", p.path)
        if not isinstance(values, list):
            return _outcome(False, f"{p.key} is not a list", [normalize(p.path)])
    try:
        xs = [float(v) for v in values]
    except (TypeError, ValueError):
        return _outcome(False, f"non-numeric values in {values!r}", [normalize(p.path)])
    if len(xs) < p.min_points:
        return _outcome(False, f"only {len(xs)} points (need {p.min_points})", [normalize(p.path)])
    sign = 1 if p.direction == "increasing" else -1
    steps = [sign * (b - a) for a, b in zip(xs, xs[1:], strict=False)]
    ok = all(math.isfinite(s) and (s > 0 if p.strict else s >= 0) for s in steps)
    shown = ", ".join(f"{x:.6g}" for x in xs)
    return _outcome(ok, f"{'strictly ' if p.strict else ''}{p.direction}: [{shown}]", [normalize(p.path)])


class LogPattern(_Params):
    path: str = "replay/stdout.log"
    pattern: str
    min_count: int = Field(default=1, ge=1)
    absent: bool = False

    @model_validator(mode="after")
    def _compiles(self):
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"pattern does not compile: {exc}") from None
        return self


def log_pattern(ev: Evidence, p: LogPattern) -> CheckOutcome:
    text = ev.read_text(p.path)
    n = len(re.findall(p.pattern, text, flags=re.MULTILINE))
    if p.absent:
        return _outcome(n == 0, f"/{p.pattern}/ found {n} time(s) (must be absent)", [normalize(p.path)])
    return _outcome(n >= p.min_count, f"/{p.pattern}/ found {n} time(s) (need {p.min_count})", [normalize(p.path)])


class ReplaySucceeded(_Params):
    # "secret": the second replay, with inputs drawn for it alone ([metadata.replay.secret_inputs])
    replay: Literal["public", "secret"] = "public"


SECRET_OUTCOME = "secret/replay/outcome.json"


def replay_succeeded(ev: Evidence, p: ReplaySucceeded) -> CheckOutcome:
    if p.replay == "secret":
        if not ev.exists(SECRET_OUTCOME):
            raise MissingEvidence(SECRET_OUTCOME, "no secret replay (the first replay failed, or the task varies "
                                                  "no inputs)")
        out = ev.read_json(SECRET_OUTCOME)
        ok = out.get("status") == "succeeded"
        why = "; ".join(out.get("failure_reasons") or []) or f"exit code {out.get('exit_code')}"
        return _outcome(ok, f"the replay with secret inputs {'succeeded' if ok else 'failed'} ({why})",
                        [SECRET_OUTCOME])
    prov = ev.provenance
    if not prov:
        raise MissingEvidence("replay/provenance.json", "no replay provenance")
    ok = prov.get("status") == "succeeded"
    why = "; ".join(prov.get("failure_reasons") or []) or f"exit code {prov.get('exit_code')}"
    # no wall time here: scores depend on the evidence only, timings live in the provenance
    return _outcome(ok, f"clean replay {'succeeded' if ok else 'failed'} ({why})", ["replay/provenance.json"])


class DeliveredSize(_Params):
    max_kb: float = Field(gt=0)
    outputs: list[str] = Field(default_factory=lambda: ["results"])


def delivered_size(ev: Evidence, p: DeliveredSize) -> CheckOutcome:
    """The package carries code, not stored results: everything it delivered outside the output roots
    (file names and contents, directory names, link targets) compresses (zlib) to at most ``max_kb`` KB.

    Names count because they survive into the replay as data (300 empty directories with 200-character
    names hold 60 KB); timestamps and extended attributes do not survive (the replay copies contents and
    permission bits only), so they are not counted."""
    def delivered(rel: str) -> bool:
        parts = rel.split("/")
        return parts[0] == "submission" and len(parts) > 1 and parts[1] not in p.outputs

    files = sorted(k for k in read_manifest(ev.root) if delivered(k))
    blob = b"".join(k.encode("utf-8", "surrogateescape") + b"\0" + ev.read_bytes(k) + b"\0" for k in files)
    top = ev.root / "submission"
    dirs = sorted(os.path.relpath(os.path.join(d, n), ev.root) for d, names, _ in os.walk(top) for n in names)
    blob += "\0".join(d for d in dirs if delivered(d)).encode("utf-8", "surrogateescape") + b"\0"
    blob += "\0".join(f"{k}->{v}" for k, v in sorted(read_links(ev.root).items()) if delivered(k)).encode(
        "utf-8", "surrogateescape")
    packed = len(zlib.compress(blob, 9)) / 1024
    return _outcome(packed <= p.max_kb, f"{len(files)} delivered file(s), {len(blob) / 1024:.1f} KB, "
                    f"{packed:.1f} KB compressed (limit {p.max_kb:g} KB)", files[:20])


class DataInCode(_Params):
    max_bytes: int = Field(ge=0)
    outputs: list[str] = Field(default_factory=lambda: ["results"])


def data_in_code(ev: Evidence, p: DataInCode) -> CheckOutcome:
    """The delivered sources hold at most ``max_bytes`` of large high-entropy literals (base64, hex, escaped
    bytes, long arrays of numbers: :mod:`workbench.replay.data_in_code`), read from the frozen evidence."""
    found = scan_tree(ev.root / "submission", skip_top=p.outputs)
    top = ", ".join(f"submission/{f['path']}: {f['bytes']} B of {f['kind']}" for f in found["findings"][:5])
    return _outcome(found["total_bytes"] <= p.max_bytes,
                    f"{found['total_bytes']} bytes of data literals in the delivered sources (limit {p.max_bytes})"
                    + (f": {top}" if top else ""),
                    sorted({f"submission/{f['path']}" for f in found["findings"][:20]}))


class TaskCheck(_Params):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class CheckKind:
    params: type[_Params]
    fn: Callable[[Evidence, Any], CheckOutcome]


CHECK_KINDS: dict[str, CheckKind] = {
    "file_exists": CheckKind(FileExists, file_exists),
    "json_value": CheckKind(JsonValue, json_value),
    "csv_value": CheckKind(CsvValue, csv_value),
    "array_shape": CheckKind(ArrayShape, array_shape),
    "monotone": CheckKind(Monotone, monotone),
    "log_pattern": CheckKind(LogPattern, log_pattern),
    "replay_succeeded": CheckKind(ReplaySucceeded, replay_succeeded),
    "delivered_size": CheckKind(DeliveredSize, delivered_size),
    "data_in_code": CheckKind(DataInCode, data_in_code),
}


# --- task-specific checks --------------------------------------------------------------------

def task_check(name: str | Callable | None = None):
    """Decorator for a check in a task's tests/checks.py: ``@task_check`` or ``@task_check("name")``.

    The function receives the :class:`Evidence` and the leaf's ``params`` as keyword arguments and
    returns a CheckOutcome, a bool, a score in [0, 1], or ``(score, rationale)``.
    """
    def mark(fn: Callable, label: str | None = None) -> Callable:
        fn.__workbench_check__ = label or fn.__name__
        return fn

    if callable(name):
        return mark(name)
    return lambda fn: mark(fn, name)


def load_task_checks(path: Path) -> dict[str, Callable]:
    """Import a task's tests/checks.py under a private module name and collect its marked checks."""
    path = Path(path)
    if not path.is_file():
        return {}
    mod_name = f"workbench_task_checks_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
    except Exception as exc:
        raise WorkbenchError(f"{path}: failed to import: {type(exc).__name__}: {exc}") from None
    finally:
        sys.modules.pop(mod_name, None)
    return {fn.__workbench_check__: fn for fn in vars(module).values()
            if callable(fn) and hasattr(fn, "__workbench_check__")}


def _normalize_result(res: Any) -> CheckOutcome:
    if isinstance(res, CheckOutcome):
        return res
    if isinstance(res, bool):
        return CheckOutcome(1.0 if res else 0.0, "pass" if res else "fail")
    if isinstance(res, int | float):
        return CheckOutcome(float(res), f"score {float(res):.3g}")
    if isinstance(res, tuple) and len(res) == 2:
        return CheckOutcome(float(res[0]), str(res[1]))
    raise TypeError(f"a task check returned {type(res).__name__}; expected CheckOutcome, bool, float or tuple")


# --- entry points ----------------------------------------------------------------------------

def parse_spec(spec: dict[str, Any]) -> tuple[str, _Params]:
    """Validate a leaf's check spec; raises CheckSpecError naming the problem."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise CheckSpecError("check: needs a 'kind'")
    kind = spec["kind"]
    params = {k: v for k, v in spec.items() if k != "kind"}
    if kind == "task":
        model: type[_Params] = TaskCheck
    elif kind in CHECK_KINDS:
        model = CHECK_KINDS[kind].params
    else:
        raise CheckSpecError("check.kind: " + unknown("kind", kind, [*CHECK_KINDS, "task"]))
    try:
        return kind, model.model_validate(params)
    except ValidationError as exc:
        msgs = "; ".join(f"check.{'.'.join(map(str, e['loc'])) or kind}: {e['msg']}" for e in exc.errors())
        raise CheckSpecError(msgs) from None


def run_check(spec: dict[str, Any], ev: Evidence, task_checks: dict[str, Callable]) -> CheckOutcome:
    kind, params = parse_spec(spec)
    if kind == "task":
        fn = task_checks.get(params.name)
        if fn is None:
            raise CheckSpecError(f"check.name: no task check named {params.name!r} in tests/checks.py")
        out = _normalize_result(fn(ev, **params.params))
    else:
        out = CHECK_KINDS[kind].fn(ev, params)
    if not (0.0 <= out.score <= 1.0) or math.isnan(out.score):
        raise CheckSpecError(f"check {kind} returned score {out.score} outside [0, 1]")
    return out
