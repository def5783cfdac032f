"""task.toml's model: strict where a key could be our typo, open to every key Harbor accepts."""

from __future__ import annotations

import pytest

from tests.conftest import REPO, write_task
from workbench.authoring.check import check_task
from workbench.errors import ValidationProblem
from workbench.task import find_tasks, load_task


def _with(root, text: str):
    (root / "task.toml").write_text((root / "task.toml").read_text() + text)
    return root


@pytest.mark.parametrize("table,typo,meant", [("environment", "memory_mbs = 1024", "memory_mb"),
                                              ("agent", "timeout_secs = 60", "timeout_sec"),
                                              ("verifier", "timeout = 60", "timeout_sec"),
                                              ("metadata.replay", "max_file = 1", "max_files")])
def test_a_mistyped_limit_is_an_error_naming_the_key_and_the_closest_one(tmp_path, table, typo, meant):
    root = write_task(tmp_path / "t")
    toml = (root / "task.toml").read_text()
    if f"[{table}]" in toml:  # add the typo to the table the scaffold already has
        (root / "task.toml").write_text(toml.replace(f"[{table}]\n", f"[{table}]\n{typo}\n", 1))
    else:
        _with(root, f"\n[{table}]\n{typo}\n")
    errors = check_task(root).errors
    key = typo.split(" ")[0]
    assert any(e.endswith(f"task.toml: {table}.{key}: unknown key (did you mean {meant}?)"
                          + ("" if table == "metadata.replay" else "; free-form data goes under [metadata]"))
               for e in errors), errors
    with pytest.raises(ValidationProblem, match=f"did you mean {meant}"):
        load_task(root)


def test_an_unknown_table_is_named_and_free_form_data_belongs_under_metadata(tmp_path):
    root = _with(write_task(tmp_path / "t"), "\n[enviroment]\ncpus = 1\n")
    with pytest.raises(ValidationProblem, match=r"task.toml: enviroment: unknown key \(did you mean environment\?\); "
                                                r"free-form data goes under \[metadata\]"):
        load_task(root)
    ok = _with(write_task(tmp_path / "u"), "\n[metadata.lab]\nnotebook = 'anything'\n")
    assert load_task(ok).config.metadata.model_extra["lab"] == {"notebook": "anything"}


def test_harbors_deprecated_sizes_become_the_limits_they_name(tmp_path):
    root = write_task(tmp_path / "t")
    toml = (root / "task.toml").read_text()
    (root / "task.toml").write_text(toml.replace("memory_mb = 1024\n", "memory = '2G'\nstorage = '512M'\n"))
    env = load_task(root).config.environment
    assert (env.memory_mb, env.storage_mb) == (2048, 512)
    (root / "task.toml").write_text(toml.replace("memory_mb = 1024\n", "memory_mb = 1024\nmemory = '2G'\n"))
    with pytest.raises(ValidationProblem, match="memory = 2048 MB and memory_mb = 1024 disagree: keep memory_mb"):
        load_task(root)


def test_every_bundled_task_and_every_imported_peer_package_still_loads():
    for root in find_tasks(REPO / "tasks"):
        load_task(root)
    from workbench.errors import load_toml_model
    from workbench.task.model import TaskConfig

    pbx = sorted((REPO / "tests/fixtures/external/paperbenchx").glob("[0-9]*"))
    assert len(pbx) == 2
    for pkg in pbx:  # Harbor 1.1 packages: [agent] user and env, [verifier] env, build_timeout_sec, gpus
        assert load_toml_model(pkg / "task.toml", TaskConfig).environment.memory_mb == 32768
