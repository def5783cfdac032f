"""Every on-disk layout of the workbench, defined once; in parentheses, the pydantic model of a file's format.

Task package (Harbor / PaperBenchX compatible)::

    tasks/<task-id>/
      task.toml                  [task] [metadata] [agent] [verifier] [environment] [metadata.replay]
      instruction.md             public task contract
      environment/
        Dockerfile               the domain environment as an image
        install.sh               the same environment on a Debian host (local sandbox)
        paper/paper.md           the claim, its citation, the reported values
        starter_submission/      reproduce.sh (+ src/) the agent starts from
      solution/                  PRIVATE reference workflow (used by the oracle agent)
      tests/                     PRIVATE
        rubric.json  checks.py  evaluator.py  questions.json  sota.json  discovery.json  recompute.py  secret_inputs.py
        judge.md  refs/          the judge's private context (and the checks' reference files)
        determinism.toml         construction records (task.records): what two reference replays may differ in,
        review.toml                expert sign-offs,
        validation.json            the last `workbench task validate`,
        freeze.json                the content hashes `workbench task freeze` recorded
      calibration/               PRIVATE submissions used to calibrate the rubric

Run and trial directories::

    runs/<run-id>/
      run.json                   the matrix (or configurations) and a lock: task content hashes (run_lock.RunSpec)
      results.db                 results index (rebuildable from the trial directories)
      .batch.lock                held by the one batch running on the directory
      locks/<trial-id>.lock      held by the process running that trial
      slurm/                     --executor slurm: each SLURM job's stdout/stderr
      trials/<trial-id>/
        trial.json               config, status per stage, timings, outcome (trial_record.TrialRecord)
        session/
          submission/            what the agent delivered
          trajectory.jsonl  agent.log
          delivery.json          what the agent delivered (session_records.Delivery)
          usage.json             tokens, cost, time (session_records.SessionUsage)
          inbox.jsonl            a person's messages to the running session ({"at", "text"} per line)
          terminal.cast          a person's session (agent human): the terminal, asciinema v2
          terminal.json          while a person's session waits or runs: where to attach (agents.human.Door)
          scoring/               the hidden scoring service's log, never mounted in the agent's sandbox
            attempts.jsonl       one session_records.ScoringAttempt per line
            best.json            the best session_records.ScoringResult, once there is one
            best_submission/     the package of that best attempt, as the service replayed it
        replay/
          provenance.json        written by the workbench, never by the submission (replay.Provenance)
          receipts.json          what ran, recorded from outside the sandbox (receipts.Receipts)
          stdout.log  stderr.log
        evidence/                frozen, read-only
          MANIFEST.sha256
          submission/            the replayed package: sources (verified unchanged) + regenerated outputs
          replay/stdout.log  replay/stderr.log
        session.refused/         a refused session, kept when a fallback configuration took over
        scores.json              (scoring.results.Scores)
        judge/<key>.json         one judged leaf: verdict, usage, evidence shown, transcript (scoring.judge.JudgeRecord)
        notebooks/               executed stage notebooks (01_agent_session ... 04_review)

Evidence paths in rubrics (``evidence_inputs[].path``, ``check.path``) are relative to ``evidence/``;
a path that does not start with ``submission/`` or ``replay/`` is read under ``submission/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PRIVATE_DIRS = ("solution", "tests", "calibration")
ENTRY = "reproduce.sh"  # what a replay runs: the submission's one entry point


@dataclass(frozen=True)
class TaskPaths:
    root: Path

    @property
    def task_toml(self) -> Path:
        return self.root / "task.toml"

    @property
    def instruction(self) -> Path:
        return self.root / "instruction.md"

    @property
    def environment(self) -> Path:
        return self.root / "environment"

    @property
    def dockerfile(self) -> Path:
        return self.environment / "Dockerfile"

    @property
    def install_sh(self) -> Path:
        return self.environment / "install.sh"

    @property
    def paper_dir(self) -> Path:
        return self.environment / "paper"

    @property
    def starter(self) -> Path:
        return self.environment / "starter_submission"

    @property
    def solution(self) -> Path:
        return self.root / "solution"

    @property
    def tests(self) -> Path:
        return self.root / "tests"

    @property
    def rubric(self) -> Path:
        return self.tests / "rubric.json"

    @property
    def checks_py(self) -> Path:
        return self.tests / "checks.py"

    @property
    def questions(self) -> Path:
        return self.tests / "questions.json"

    @property
    def evaluator(self) -> Path:
        return self.tests / "evaluator.py"

    @property
    def sota(self) -> Path:
        return self.tests / "sota.json"

    @property
    def discovery(self) -> Path:
        return self.tests / "discovery.json"

    @property
    def recompute_py(self) -> Path:
        return self.tests / "recompute.py"

    @property
    def secret_inputs_py(self) -> Path:
        return self.tests / "secret_inputs.py"

    @property
    def judge_md(self) -> Path:
        return self.tests / "judge.md"

    @property
    def refs(self) -> Path:
        return self.tests / "refs"

    @property
    def determinism(self) -> Path:
        return self.tests / "determinism.toml"

    @property
    def review_log(self) -> Path:
        return self.tests / "review.toml"

    @property
    def validation(self) -> Path:
        return self.tests / "validation.json"

    @property
    def freeze(self) -> Path:
        return self.tests / "freeze.json"

    @property
    def calibration(self) -> Path:
        return self.root / "calibration"


@dataclass(frozen=True)
class TrialPaths:
    root: Path

    @property
    def trial_json(self) -> Path:
        return self.root / "trial.json"

    @property
    def session(self) -> Path:
        return self.root / "session"

    @property
    def submission(self) -> Path:
        return self.session / "submission"

    @property
    def trajectory(self) -> Path:
        return self.session / "trajectory.jsonl"

    @property
    def agent_log(self) -> Path:
        return self.session / "agent.log"

    @property
    def usage(self) -> Path:
        return self.session / "usage.json"

    @property
    def delivery(self) -> Path:
        return self.session / "delivery.json"

    @property
    def scoring_service(self) -> Path:
        """The scoring service's log: on the host, outside everything the agent's sandbox mounts."""
        return self.session / "scoring"

    @property
    def attempts(self) -> Path:
        return self.scoring_service / "attempts.jsonl"

    @property
    def best(self) -> Path:
        return self.scoring_service / "best.json"

    @property
    def inbox(self) -> Path:
        """Messages from a person to the running session (``workbench discover-message``), one JSON per line."""
        return self.session / "inbox.jsonl"

    @property
    def terminal_cast(self) -> Path:
        """A person's session (``--agent human``) as an asciinema v2 recording of their terminal."""
        return self.session / "terminal.cast"

    @property
    def terminal_door(self) -> Path:
        """While a person's session waits or runs: the Unix socket to attach to (``workbench attach``)."""
        return self.session / "terminal.json"

    @property
    def best_submission(self) -> Path:
        """The package of the best attempt, as the service replayed it (a discovery run replays it at the end)."""
        return self.scoring_service / "best_submission"

    @property
    def session_refused(self) -> Path:
        return self.root / "session.refused"

    @property
    def replay(self) -> Path:
        return self.root / "replay"

    @property
    def provenance(self) -> Path:
        return self.replay / "provenance.json"

    @property
    def receipts(self) -> Path:
        return self.replay / "receipts.json"

    @property
    def stdout_log(self) -> Path:
        return self.replay / "stdout.log"

    @property
    def stderr_log(self) -> Path:
        return self.replay / "stderr.log"

    @property
    def secret_replay(self) -> Path:
        """The second replay's logs (its inputs drawn for it alone; frozen under evidence/secret/)."""
        return self.replay / "secret"

    @property
    def evidence(self) -> Path:
        return self.root / "evidence"

    @property
    def manifest(self) -> Path:
        return self.evidence / "MANIFEST.sha256"

    @property
    def scores(self) -> Path:
        return self.root / "scores.json"

    @property
    def judge(self) -> Path:
        return self.root / "judge"

    def judge_record(self, key: str) -> Path:
        return self.judge / f"{key}.json"

    @property
    def notebooks(self) -> Path:
        return self.root / "notebooks"


def run_of(trial_dir: Path | str) -> Path | None:
    """The run directory holding a trial (RUN/trials/TRIAL), or None for a trial outside a run."""
    root = Path(trial_dir).resolve()
    return root.parent.parent if root.parent.name == "trials" else None


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def run_json(self) -> Path:
        return self.root / "run.json"

    @property
    def trials(self) -> Path:
        return self.root / "trials"

    @property
    def locks(self) -> Path:
        return self.root / "locks"

    def lock(self, trial_id: str) -> Path:
        return self.locks / f"{trial_id}.lock"

    @property
    def batch_lock(self) -> Path:
        return self.root / ".batch.lock"

    @property
    def results_db(self) -> Path:
        return self.root / "results.db"

    @property
    def executor_logs(self) -> Path:
        """The SLURM jobs' stdout/stderr (one file per job) of ``--executor slurm``."""
        return self.root / "slurm"

    def trial(self, trial_id: str) -> TrialPaths:
        return TrialPaths(self.trials / trial_id)
