"""`workbench task check`: everything a task needs before it can be run, stated file by file.

Errors make the task unusable (exit 1); warnings name what a complete package would also have.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ValidationProblem, WorkbenchError
from ..paths import TaskPaths
from .package import load_config


@dataclass
class Report:
    task: Path
    errors: list[str]
    warnings: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors


def _check_rubric(paths: TaskPaths, errors: list[str], warnings: list[str], provided: set[str] = frozenset()) -> None:
    from ..rubric import load_rubric
    from ..scoring.checks import CheckSpecError, load_task_checks, parse_spec

    try:
        rubric = load_rubric(paths.rubric)
    except ValidationProblem as exc:
        errors.extend(exc.problems)
        return
    try:
        task_checks = load_task_checks(paths.checks_py)
    except WorkbenchError as exc:
        errors.append(str(exc))
        task_checks = None
    leaves = rubric.leaves
    for lf in leaves:
        if not lf.node.check:
            continue
        where = f"{paths.rubric}: {lf.path} (id {lf.id})"
        try:
            kind, params = parse_spec(lf.node.check)
        except CheckSpecError as exc:
            errors.append(f"{where}: {exc}")
            continue
        if kind == "task" and task_checks is not None and params.name not in {*task_checks, *provided}:
            errors.append(f"{where}: check.name: no @task_check named {params.name!r} in {paths.checks_py}")
    phases = {lf.phase for lf in leaves if lf.effective_weight > 0}
    for p in ("modeling", "execution", "validation"):
        if p not in phases:
            warnings.append(f"{paths.rubric}: no leaf with weight in phase {p}")


def _check_sota(paths: TaskPaths, errors: list[str]) -> set[str]:
    """Check sota.json and the evaluator; returns the ``sota:<instance>`` checks they give the rubric."""
    import ast

    from ..scoring.sota import load_spec

    provided: set[str] = set()
    try:
        provided = {f"sota:{n}" for n in load_spec(paths.sota).instances}
    except ValidationProblem as exc:
        errors.extend(exc.problems)
    if not paths.evaluator.is_file():
        errors.append(f"{paths.evaluator}: file not found (scoring = \"sota\" needs run_evaluation())")
        return provided
    try:
        tree = ast.parse(paths.evaluator.read_text(encoding="utf-8"))
    except SyntaxError as exc:
        errors.append(f"{paths.evaluator}: line {exc.lineno}: {exc.msg}")
        return provided
    if not any(isinstance(n, ast.FunctionDef) and n.name == "run_evaluation" for n in tree.body):
        errors.append(f"{paths.evaluator}: defines no run_evaluation()")
    return provided


def _check_questions(paths: TaskPaths, errors: list[str], warnings: list[str]) -> None:
    from ..scoring.qa import load_questions

    try:
        qs = load_questions(paths.questions)
    except ValidationProblem as exc:
        errors.extend(exc.problems)
        return
    contract = paths.instruction.read_text(encoding="utf-8", errors="replace") if paths.instruction.is_file() else ""
    unseen = [q.id for q in qs.questions if q.id not in contract]
    if unseen:
        warnings.append(f"{paths.instruction}: does not ask question(s) {', '.join(unseen)} (agents cannot answer "
                        "what the contract does not ask)")
    unverified = [q.id for q in qs.questions if not q.verified_by]
    if unverified:
        warnings.append(f"{paths.questions}: answers of {', '.join(unverified)} do not say how they were verified")


def check_task(root: Path | str) -> Report:
    paths = TaskPaths(Path(root))
    errors: list[str] = []
    warnings: list[str] = []
    if not paths.root.is_dir():
        return Report(paths.root, [f"{paths.root}: not a directory"], [])
    config = None
    try:
        config = load_config(paths.task_toml)
    except ValidationProblem as exc:
        errors.extend(exc.problems)

    if not paths.instruction.is_file():
        errors.append(f"{paths.instruction}: file not found (the public task contract)")
    elif not paths.instruction.read_text(encoding="utf-8", errors="replace").strip():
        errors.append(f"{paths.instruction}: is empty")

    if not paths.install_sh.is_file() and not paths.dockerfile.is_file():
        errors.append(f"{paths.environment}: needs install.sh (local sandbox) or Dockerfile")
    elif not paths.install_sh.is_file():
        warnings.append(f"{paths.install_sh}: missing; the local bwrap sandbox will only have the host's /usr")
    elif not paths.dockerfile.is_file():
        warnings.append(f"{paths.dockerfile}: missing; the docker sandbox cannot build this task")

    scoring = config.metadata.scoring if config else "rubric"
    provided = _check_sota(paths, errors) if scoring == "sota" else set()
    if scoring == "rubric" or (scoring == "sota" and paths.rubric.is_file()):
        _check_rubric(paths, errors, warnings, provided)
    if scoring == "qa":
        _check_questions(paths, errors, warnings)
    if config is not None:
        for key in ("domain", "field", "paper"):
            if not getattr(config.metadata, key):
                warnings.append(f"{paths.task_toml}: metadata.{key}: not set")

    if not (paths.starter / "reproduce.sh").is_file():
        warnings.append(f"{paths.starter}/reproduce.sh: missing; agents start from an empty submission")
    if not (paths.solution / "reproduce.sh").is_file():
        warnings.append(f"{paths.solution}/reproduce.sh: missing; the oracle agent cannot run this task")
    if not (paths.paper_dir / "paper.md").is_file():
        warnings.append(f"{paths.paper_dir}/paper.md: missing; agents get no paper")
    if config is not None and not errors:
        _check_construction(paths, config, errors, warnings)
    return Report(paths.root, errors, warnings)


def _check_construction(paths: TaskPaths, config, errors: list[str], warnings: list[str]) -> None:
    """The construction records: a frozen task must not change; validation and reviews are reported."""
    from .package import Task
    from .records import ValidationRecord
    from .validate import frozen_changes, load_determinism, load_reviews

    task = Task(paths, config)
    try:
        load_determinism(task)
        reviewers = load_reviews(task).reviewers
    except ValidationProblem as exc:
        errors.extend(exc.problems)
        return
    changed = frozen_changes(task)
    if changed:
        errors.append(f"{paths.tests / 'freeze.json'}: the task changed since it was frozen: {', '.join(changed[:8])}")
    vpath = paths.tests / "validation.json"
    if vpath.is_file():
        record = ValidationRecord.model_validate_json(vpath.read_text())
        if record.content_hash != task.content_hash():
            warnings.append(f"{vpath}: stale (the task changed since it was validated)")
        elif not record.passed:
            warnings.append(f"{vpath}: the last validation failed")
    if len(reviewers) < 2:
        warnings.append(f"{paths.tests / 'review.toml'}: {len(reviewers)} of 2 expert review sign-offs")
