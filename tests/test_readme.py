"""The commands the README and the documentation site show, parsed from README.md and docs/*.md: every one
names real verbs and options, and the ones that need no model endpoint, server or hours are run as written
(outputs redirected to a temp folder)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer.main

from tests.conftest import REPO, run_cli
from workbench.cli import app

README = REPO / "README.md"
DOCS = REPO / "docs"
# run as written, in page order: everything else is parsed only (why, per verb)
NOT_RUN = {
    "task validate": "every task's construction checks: ~15 min (run by make test)",
    "task freeze": "rewrites a bundled task's records",
    "task import": "needs the source task",
    "env install": "the demo environment is installed by the session's fixtures",
    "batch": "needs the reader's matrix.toml",
    "review serve": "a server (its browser test starts it)",
    "review adjudicate": "run after a dispute; review set covers the same path",
    "demo": "tested by test_cli and make demo",
    "tour": "tested by test_tour",
    "view": "a server (its browser test starts it)",
    "lab": "a server (tests/review/test_lab.py starts it)",
    "attach": "a person at a terminal (tests/agents/test_human.py drives one through a pty)",
    "class": "students at terminals (tests/teaching/test_classroom.py)",
}


def pages() -> list[Path]:
    """README.md, then the site's pages in the order of its table of contents (docs/index.md's toctrees).

    A page's commands may use what its earlier commands made (a run, then its index), as the README's did
    when it held them all; the README's former order lives on inside each page, and the toctree keeps
    the pages in the order the README had them (the command line before the exports that read its run).
    """
    toctrees = "\n".join(re.findall(r"```\{toctree\}\n(.*?)```", (DOCS / "index.md").read_text(), re.S))
    site = [DOCS / f"{name}.md" for name in re.findall(r"^([\w-]+)$", toctrees, re.M)]
    unlisted = sorted(set(DOCS.glob("*.md")) - set(site) - {DOCS / "index.md"})
    return [README, DOCS / "index.md", *site, *unlisted]


def readme_commands() -> list[str]:
    """Each `workbench ...` line of the bash blocks of every page, continuations joined, comments dropped."""
    blocks = [b for page in pages() for b in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S)]
    commands = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s#\s.*$", "", line).strip()
            line = re.sub(r"^([A-Z_]+=\S+\s+)+", "", line)  # VAR=value workbench ...
            if line.startswith("workbench "):
                commands.append(line)
    return commands


def _words(command: str, *, optional: bool) -> list[str]:
    """The command's words; ``[...]`` groups kept (brackets dropped) when ``optional``, else left out."""
    text = re.sub(r"\[([^\]]*)\]", r"\1" if optional else "", command)
    return shlex.split(text)[1:]


def _resolve(words: list[str]):
    cmd, path = typer.main.get_command(app), []
    while hasattr(cmd, "commands") and words and words[0] in cmd.commands:
        path.append(words[0])
        cmd = cmd.commands[words.pop(0)]
    return cmd, " ".join(path), words


def test_the_readme_has_its_commands():
    verbs = {_resolve(_words(c, optional=False))[1] for c in readme_commands()}
    assert len(readme_commands()) >= 30 and {"run", "score", "replay", "batch", "report", "review serve"} <= verbs


@pytest.mark.parametrize("command", readme_commands())
def test_every_readme_command_names_real_verbs_and_options(command):
    cmd, path, rest = _resolve(_words(command, optional=True))
    assert path and not hasattr(cmd, "commands"), f"{command!r}: no such command"
    known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"-v", "--verbose", "--help"}
    unknown = [w for w in rest if w.startswith("-") and w.split("=")[0] not in known]
    assert unknown == [], f"{command!r}: {path} has no option {unknown[0]}"
    arguments = [p for p in cmd.params if p.param_type_name == "argument" and p.required]
    values = [w for w in rest if not w.startswith("-")]
    assert len(values) >= len(arguments), f"{command!r}: {path} needs {[a.name for a in arguments]}"


def _redirected(words: list[str], tmp, trial) -> list[str]:
    """The README's output paths, inside the test's folder (its inputs stay as written)."""
    mine = str(tmp / "runs" / "mine")
    table = {"/tmp/trial": str(tmp / "trial"), "runs/mine": mine, "runs/b1": mine, "runs/first": mine,
             "runs/demo": mine,
             "runs/b1/trials/T": trial, "runs/demo/trials/h2-pes__oracle__1": trial, "runs": str(tmp / "runs"),
             "t.json": str(tmp / "t.json")}
    return [table.get(w, str(tmp / w) if w.startswith(("reports/", "runs/")) else w) for w in words]


@pytest.mark.slow
def test_the_readme_commands_run_as_written(tmp_path, demo_task):
    trial = str(tmp_path / "runs" / "mine" / "trials" / "h2-pes__oracle__1")
    ran = []
    # the lines that read the run a model or the demo made (runs/first, runs/demo) run once the oracle's exists
    # a command shown on two pages (the README's example is the quickstart's) runs once
    ordered = sorted(dict.fromkeys(readme_commands()),
                     key=lambda c: bool({"runs/first", "runs/demo"} & set(shlex.split(c))))
    for command in ordered:
        words = _words(command, optional=False)
        verb = _resolve(list(words))[1]
        needs_a_model = "--judge-model" in words or (
            "--agent" in words and words[words.index("--agent") + 1] not in ("oracle", "nop"))
        if verb in NOT_RUN or needs_a_model:  # parsed above; a model endpoint is another test's business
            continue
        if verb == "run" and "docker" in words:  # the demo oracle under docker: test_docker's parity test runs it
            continue
        args = _redirected(words, tmp_path, trial)
        proc = run_cli(*args, timeout=900)
        assert proc.returncode in (0, 3 if verb == "replay" else 0), f"{command}\n{proc.stdout}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr
        if verb == "run" and "oracle" in words:  # it says where the scores are
            out = Path(args[args.index("--out") + 1])
            assert "full = true" in proc.stdout
            assert f"scores: {out / 'trials/h2-pes__oracle__1/scores.json'}" in proc.stdout, proc.stdout
        ran.append(verb)
    assert {"replay", "score", "run", "index", "trajectory", "review set", "judge-eval", "report"} <= set(ran)
