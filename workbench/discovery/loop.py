"""The discovery controller: prepare → (propose → K parallel implement) × R, then the best replayed cleanly.

Every session is a normal agent session (:func:`workbench.session.run.run_session`): sandboxed, with its
trajectory and usage, and the task's hidden scoring service, which records each attempt and keeps the
package of the best one where no session can write (``scoring_service/``). The controller owns the rest:

- **Workspaces**: an implement session starts from the best package so far (or the initial code) in a
  fresh git repository the controller makes (never one a session made: git reads hooks and commands from
  a repository's own configuration, so the controller runs git only on repositories it created, with hooks
  and fsmonitor off), plus its hypothesis in HYPOTHESIS.md; the agent commits its versions.
- **Permissions**: a session sees the task's public contract and a read-only context: the ranked history,
  the preparation summary and the workspaces of *earlier* rounds. A sibling of the same round is never
  copied into it (same-round isolation by construction); the evaluator is reachable only through the
  scoring service.
- **History**: after each round every valid scored attempt of every implement session is ranked in the
  task's direction into RUN/history.json and history.md.
- **State and budgets**: RUN/discovery.json is rewritten after every change, so a run killed at any moment
  resumes from it: finished sessions are kept, an interrupted one is run again from its start. A cost limit
  across sessions stops the run between sessions, every workspace kept.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from ..agents import PublicTask
from ..batch.matrix import AgentConfig
from ..errors import WorkbenchError
from ..io import atomic_write_json, copy_tree, remove_tree
from ..paths import TrialPaths
from ..session.ledger import read_usage
from ..task import load_task
from ..task.package import Task
from .goals import (
    ANSWERS,
    HYPOTHESES,
    HYPOTHESIS,
    PREPARATION,
    QUESTIONS,
    continue_goal,
    implement_goal,
    prepare_goal,
    propose_goal,
)
from .people import ANSWER, PAUSE
from .records import (
    DiscoveryState,
    HistoryEntry,
    Limits,
    RankedHistory,
    SessionRecord,
    now,
    scored_attempts,
    session_parts,
)

log = logging.getLogger(__name__)

MAX_DELIVERABLE_BYTES = 64 * 1024  # a hypotheses file or a preparation summary read back from a session
PAUSE_POLL_SEC = 1.0


def _plan(rounds: int, parallel: int) -> list[SessionRecord]:
    out = [SessionRecord(id="prepare", phase="prepare")]
    for r in range(1, rounds + 1):
        out.append(SessionRecord(id=f"r{r}-propose", phase="propose", round=r))
        out += [SessionRecord(id=f"r{r}-i{k}", phase="implement", round=r, index=k) for k in range(1, parallel + 1)]
    return out


def _read_small(path: Path, limit: int = MAX_DELIVERABLE_BYTES) -> str | None:
    """A session's deliverable, read without following a link it planted, up to ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    finally:
        os.close(fd)


def read_hypotheses(submission: Path, parallel: int) -> list[dict[str, str]]:
    """Up to ``parallel`` hypotheses from a propose session's hypotheses.json; malformed entries are skipped."""
    text = _read_small(submission / HYPOTHESES)
    try:
        data = json.loads(text) if text else []
    except ValueError:
        data = []
    out = []
    for h in data if isinstance(data, list) else []:
        if isinstance(h, dict) and isinstance(h.get("title"), str) and h["title"].strip():
            out.append({"title": h["title"].strip()[:200], "description": str(h.get("description") or "")[:2000]})
    return out[:parallel]


def _git(repo: Path, *args: str) -> None:
    """git on a repository the controller made, with nothing read from the user's or the system's configuration."""
    home = tempfile.mkdtemp(prefix="workbench-git-")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull}
    try:
        subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                        "-c", "commit.gpgSign=false", "-c", "user.name=workbench discovery",
                        "-c", "user.email=discovery@workbench.invalid", *args],
                       cwd=repo, env=env, check=True, capture_output=True, timeout=120)
    finally:
        remove_tree(Path(home))


class Controller:
    def __init__(self, task: Task, state: DiscoveryState, out: Path, say: Callable[[str], None]):
        self.task, self.state, self.out, self.say = task, state, out, say
        self.spec = task.discovery_spec
        self._lock = threading.Lock()  # parallel sessions save the one state file

    # --- files -----------------------------------------------------------------------------------

    def save(self) -> None:
        with self._lock:
            atomic_write_json(self.out / "discovery.json", self.state.model_dump())

    def trial(self, rec: SessionRecord) -> TrialPaths:
        return TrialPaths(self.out / "sessions" / rec.id)

    def ranked(self) -> RankedHistory:
        """Every valid attempt of every implement session, best first."""
        sign = 1 if self.spec.direction == "maximize" else -1
        found, submitted = [], 0
        for rec, a in scored_attempts(self.out, self.state):
            submitted += 1
            d = a.discovery or {}
            if d.get("valid") is True and isinstance(d.get("metric"), int | float):
                found.append((rec, a, float(d["metric"])))
        found.sort(key=lambda x: (-sign * x[2], x[0].round, x[0].index, x[1].attempt))
        entries = [HistoryEntry(rank=i, session=rec.id, round=rec.round, attempt=a.attempt, metric=m,
                                message=(a.discovery or {}).get("message") or "", description=a.description, at=a.at)
                   for i, (rec, a, m) in enumerate(found, 1)]
        return RankedHistory(metric=self.spec.metric, direction=self.spec.direction,
                             published=self.spec.published.value, entries=entries, submitted=submitted)

    def write_history(self) -> RankedHistory:
        h = self.ranked()
        atomic_write_json(self.out / "history.json", h.model_dump())
        lines = [f"# Ranked history: {h.metric} ({h.direction}; published record {h.published:g})", "",
                 f"{len(h.entries)} valid of {h.submitted} scored submissions.", "",
                 "| rank | metric | session | round | attempt | description |", "|---|---|---|---|---|---|"]
        lines += [f"| {e.rank} | {e.metric:.10g} | {e.session} | {e.round} | {e.attempt} | "
                  f"{e.description.replace('|', '/')[:120]} |" for e in h.entries[:50]]
        (self.out / "history.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return h

    def context(self, round_: int) -> Path:
        """What a session of ``round_`` may read: the history, the preparation, earlier rounds' workspaces."""
        ctx = self.out / "context" / f"r{round_}"
        remove_tree(ctx)
        ctx.mkdir(parents=True)
        for name in ("history.json", "history.md"):
            if (self.out / name).is_file():
                (ctx / name).write_bytes((self.out / name).read_bytes())
        prep = self.state.session("prepare")
        if prep and prep.status == "done":
            text = _read_small(self.trial(prep).submission / PREPARATION)
            if text:
                (ctx / PREPARATION).write_text(text, encoding="utf-8")
        if self.state.answer is not None:
            (ctx / ANSWERS).write_text(f"# A person's answer to the preparation's questions\n\n## Question\n\n"
                                       f"{self.state.question}\n\n## Answer\n\n{self.state.answer}\n", encoding="utf-8")
        for rec in self.state.sessions:
            if rec.round < round_ and rec.phase in ("propose", "implement") and rec.status == "done":
                copy_tree(self.trial(rec).submission, ctx / "workspaces" / rec.id, metadata=False)
        return ctx

    def best_package(self) -> Path | None:
        h = self.ranked()
        if not h.entries:
            return None
        best = self.trial(self.state.session(h.entries[0].session)).best_submission
        return best if best.is_dir() else None

    # --- sessions --------------------------------------------------------------------------------

    def view(self, goal: str, context: Path, timeout_sec: float) -> PublicTask:
        base = PublicTask.of(self.task)
        return replace(base, instruction=goal + "\n---\n\n" + base.instruction, timeout_sec=timeout_sec,
                       context_dir=context)

    def config(self, rec: SessionRecord) -> AgentConfig:
        base = self.state.propose_agent if rec.phase == "propose" else self.state.agent
        limit = self.state.limits.cost_usd
        update = {"options": {**base.options, "scoring_service": True}}
        if limit is not None:  # what the run has left caps this session
            left = max(limit - self.state.cost(), 0.0)
            update["max_cost_usd"] = min(base.max_cost_usd or left, left)
        return base.model_copy(update=update)

    def workspace(self, rec: SessionRecord, hypothesis: dict[str, str]) -> Path:
        """An implement session's starting copy: the best package so far (without any .git, at any depth: a
        nested repository's configuration could make git run a command), the hypothesis, a fresh repository
        with one commit."""
        start = self.out / "workspaces" / rec.id
        remove_tree(start)
        seed = self.best_package() or self.task.paths.starter
        copy_tree(seed, start, metadata=False)
        for git_dir in sorted(start.rglob(".git"), key=lambda p: -len(p.parts)):  # any depth: git reads them
            remove_tree(git_dir) if git_dir.is_dir() and not git_dir.is_symlink() else git_dir.unlink()
        (start / HYPOTHESIS).write_text(f"# {hypothesis['title']}\n\n{hypothesis['description']}\n", encoding="utf-8")
        _git(start, "init", "-q")
        _git(start, "add", "-A")
        _git(start, "commit", "-q", "-m", f"start: {hypothesis['title']}\n\nFrom "
             + ("the best package so far" if seed != self.task.paths.starter else "the initial code"))
        return start

    def wait_while_paused(self) -> None:
        """A person paused the run: sessions already running finish, no new one starts until the pause ends."""
        if not (self.out / PAUSE).exists():
            return
        self.say(f"paused: no new session starts until `workbench discover-pause {self.out} --off`")
        while (self.out / PAUSE).exists():
            time.sleep(PAUSE_POLL_SEC)
        self.say("resumed")

    def delivered(self, rec: SessionRecord) -> bool:
        """Whether a finished session left what its phase asks for (what --extend gives more time to reach)."""
        sub = self.trial(rec).submission
        if rec.phase == "prepare":
            return any(_read_small(sub / name) for name in (PREPARATION, QUESTIONS))
        if rec.phase == "propose":
            return bool(read_hypotheses(sub, self.state.parallel))
        return rec.best_metric is not None

    def run(self, rec: SessionRecord, goal: str, context: Path, start: Path | None = None) -> None:
        """One session, and its continuation (--extend) if it runs out of time before its deliverable; a
        continuation interrupted by a kill runs again from where the first part stopped."""
        first = self.out / "sessions" / f"{rec.id}.part1"
        if not (rec.extended_sec and first.is_dir()):
            self._session(rec, goal, context, start, self.state.limits.for_phase(rec.phase))
            extend = self.state.limits.extend_sec
            if not (extend and rec.status == "done" and rec.agent_status == "timeout" and not self.delivered(rec)):
                return
            remove_tree(first)
            self.trial(rec).root.rename(first)
            rec.extended_sec = extend
            self.say(f"{rec.id}: ran out of time before its deliverable; continued for {extend:.0f} s from where it "
                     "stopped (--extend)")
        self._session(rec, continue_goal(goal, rec.extended_sec), context, TrialPaths(first).submission,
                      rec.extended_sec)

    def _session(self, rec: SessionRecord, goal: str, context: Path, start: Path | None, timeout_sec: float) -> None:
        from ..session.run import run_session

        tp = self.trial(rec)
        remove_tree(tp.root)  # an interrupted session runs again from its start
        rec.status, rec.error, rec.started_at, rec.ended_at = "running", None, now(), None
        self.save()
        self.say(f"{rec.id}: {rec.phase} session started ({timeout_sec:.0f} s)")
        try:
            delivery = run_session(self.task, self.config(rec), tp.root, sandbox=self.state.sandbox,
                                   view=self.view(goal, context, timeout_sec), start=start)
        except Exception as exc:  # recorded, the run goes on with what the other sessions found
            log.warning("discovery session %s failed: %s", rec.id, exc)
            rec.status, rec.error, rec.ended_at = "failed", f"{type(exc).__name__}: {str(exc)[:400]}", now()
            self.save()
            self.say(f"{rec.id}: failed: {rec.error}")
            return
        parts = session_parts(self.out, rec)
        usages = [u for u in (read_usage(p) for p in parts) if u is not None]
        rec.agent_status = delivery.agent_status
        rec.wall_sec = sum(u.wall_sec or 0.0 for u in usages) or delivery.wall_sec
        rec.cost_usd = sum(u.cost_usd for u in usages if u.cost_usd is not None) \
            if any(u.cost_usd is not None for u in usages) else None
        rec.attempts = sum(len(p.attempts.read_text(encoding="utf-8").splitlines())
                           for p in parts if p.attempts.is_file())
        if tp.best.is_file():  # a continued session had no valid submission before: its best is this part's
            best = json.loads(tp.best.read_text(encoding="utf-8")).get("discovery") or {}
            rec.best_metric = best.get("metric") if best.get("valid") else None
        rec.status, rec.ended_at = "done", now()
        self.save()
        self.say(f"{rec.id}: {delivery.agent_status}, {rec.attempts} submission(s), best {rec.best_metric}")

    def ask_a_person(self) -> None:
        """The prepare session asked for clarification (QUESTIONS.md): the run waits for a person's answer
        (``workbench discover-message RUN prepare TEXT``), which every later session reads."""
        prep = self.state.session("prepare")
        if self.state.question is None and prep.status == "done":
            text = (_read_small(self.trial(prep).submission / QUESTIONS) or "").strip()
            if text:
                self.state.question = text[:4000]
                self.save()
        if self.state.question is None or self.state.answer is not None:
            return
        path = self.out / ANSWER
        if not path.is_file():
            first = self.state.question.splitlines()[0][:160]
            self.say(f"prepare asks a person, and the run waits for an answer: {first!r} (all of it in "
                     f"{self.trial(prep).submission / QUESTIONS}); answer with "
                     f"`workbench discover-message {self.out} prepare TEXT`")
            while not path.is_file():
                time.sleep(PAUSE_POLL_SEC)
        self.state.answer = path.read_text(encoding="utf-8")[:4000]
        self.save()
        self.say("answered: the run goes on, and every later session reads the answer")

    def over_budget(self) -> bool:
        limit = self.state.limits.cost_usd
        if limit is not None and self.state.cost() >= limit:
            self.state.stopped = (f"the cost limit was reached: ${self.state.cost():.4f} of ${limit:.4f} across "
                                  "sessions; every workspace is kept")
            self.save()
            return True
        return False

    # --- the loop --------------------------------------------------------------------------------

    def loop(self) -> None:
        prep = self.state.session("prepare")
        if prep.status not in ("done", "failed"):
            self.wait_while_paused()
            if self.over_budget():
                return
            self.run(prep, prepare_goal(), self.context(0))
        self.ask_a_person()
        for r in range(1, self.state.rounds + 1):
            propose = self.state.session(f"r{r}-propose")
            if propose.status not in ("done", "failed"):
                self.wait_while_paused()
                if self.over_budget():
                    return
                self.run(propose, propose_goal(r, self.state.parallel), self.context(r))
            hyps = read_hypotheses(self.trial(propose).submission, self.state.parallel) \
                if propose.status == "done" else []
            todo = [s for s in self.state.sessions if s.round == r and s.phase == "implement"
                    and s.status not in ("done", "failed")]
            if todo:
                self.wait_while_paused()
            if todo and self.over_budget():
                return
            chosen = {}
            for s in todo:
                chosen[s.id] = hyps[s.index - 1] if s.index <= len(hyps) else {
                    "title": "improve the best solution so far",
                    "description": "The proposal gave no hypothesis for this session: improve the best solution "
                                   "so far by any means."}
                s.hypothesis = chosen[s.id]["title"]
            self.save()
            context = self.context(r)
            goals = {s.id: implement_goal(r, chosen[s.id]["title"], chosen[s.id]["description"]) for s in todo}
            starts = {s.id: self.workspace(s, chosen[s.id]) for s in todo}
            with ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
                for f in [pool.submit(self.run, s, goals[s.id], context, starts[s.id]) for s in todo]:
                    f.result()
            h = self.write_history()
            best = f"{h.entries[0].metric:.10g} ({h.entries[0].session})" if h.entries else "none valid yet"
            self.say(f"round {r}: {len(h.entries)} valid of {h.submitted} submissions; best {best}")

    def finish(self) -> None:
        """The best package, replayed cleanly and scored like any trial (RUN/final/)."""
        from ..replay.trial import replay_trial
        from ..scoring import score_trial

        h = self.write_history()
        best = self.best_package()
        if best is None:
            self.state.final = {"status": "no valid submission"}
            self.save()
            return
        final = self.out / "final"
        remove_tree(final)
        prov = replay_trial(self.task, best, final, sandbox=self.state.sandbox)
        scores = score_trial(self.task, final)
        d = scores.discovery or {}
        self.state.final = {"status": "scored", "session": h.entries[0].session, "claimed": h.entries[0].metric,
                            "replay": prov.status, "metric": d.get("metric"), "valid": d.get("valid"),
                            "progress": d.get("progress"), "beats_published": d.get("beats_published"),
                            "R": scores.R, "trial": str(final)}
        self.save()
        self.say(f"final: {h.entries[0].session}'s best replayed cleanly: {self.spec.metric} = {d.get('metric')} "
                 f"(valid {d.get('valid')}, R = {scores.R:.4f}); published {self.spec.published.value:g}")


def discover(task_dir: Path | str, agent: AgentConfig, out: Path | str, *, rounds: int | None = None, parallel: int = 2,
             propose_agent: AgentConfig | None = None, limits: Limits | None = None, sandbox: str = "bwrap",
             say: Callable[[str], None] = print) -> DiscoveryState:
    """Run (or resume) a discovery run of ``task_dir`` in ``out``.

    Args:
        task_dir: a ``scoring = "discovery"`` task.
        agent: the configuration every prepare and implement session runs.
        out: the run directory; if it holds a run, that run resumes (same task, same settings).
        rounds: R, the propose → implement rounds (default 3; on a resumed run, more rounds than it was started
            with are added to it, and None keeps its own).
        parallel: K, implement sessions per round (in parallel).
        propose_agent: the propose sessions' configuration (default ``agent``).
        limits: time per phase's sessions and cost across sessions; on a resumed run only the fields given
            explicitly change.
        sandbox: ``bwrap`` or ``docker``.
        say: where progress lines go.
    """
    import fcntl

    task = load_task(task_dir)
    if task.scoring != "discovery":
        raise WorkbenchError(f"{task.root}: scoring is {task.scoring!r}; `workbench discover` needs a discovery task")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lock = open(out / ".discovery.lock", "w")  # noqa: SIM115 - held for the whole run
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise WorkbenchError(f"{out}: another discovery controller is running this run") from None
    try:
        path = out / "discovery.json"
        if path.is_file():
            state = DiscoveryState.model_validate_json(path.read_text(encoding="utf-8"))
            if Path(state.task).resolve() != task.root.resolve():
                raise WorkbenchError(f"{out}: holds a run of {state.task}, not {task.root}")
            if limits is not None:  # what was given explicitly changes (--implement-min 60 extends that phase)
                state.limits = state.limits.model_copy(update={k: getattr(limits, k) for k in limits.model_fields_set})
            if rounds is not None and rounds > state.rounds:
                state.sessions += [s for s in _plan(rounds, state.parallel) if state.session(s.id) is None]
                state.rounds = rounds
            say(f"resuming {out}: {sum(s.status == 'done' for s in state.sessions)} of {len(state.sessions)} "
                f"sessions done")
        else:
            rounds = rounds or 3
            state = DiscoveryState(task=str(task.root), started_at=now(), agent=agent,
                                   propose_agent=propose_agent or agent, rounds=rounds, parallel=parallel,
                                   limits=limits or Limits(), sandbox=sandbox, sessions=_plan(rounds, parallel))
        ctl = Controller(task, state, out, say)
        ctl.save()
        ctl.loop()
        if state.stopped:
            say(f"stopped: {state.stopped}")
        ctl.finish()
        return state
    finally:
        lock.close()
