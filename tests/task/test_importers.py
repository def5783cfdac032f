"""Importers against real PaperBench / PaperBenchX files and small Harbor / NatureBench packages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXTERNAL, run_cli, write_files
from workbench.authoring.check import check_task
from workbench.errors import WorkbenchError
from workbench.replay.trial import replay_trial
from workbench.rubric import load_rubric
from workbench.scoring import score_trial
from workbench.task import load_task
from workbench.task.importers import IMPORTERS, import_task

PBX = sorted((EXTERNAL / "paperbenchx").glob("[0-9]*"))


def test_the_registry_names_the_four_sources():
    assert set(IMPORTERS) == {"paperbench", "paperbenchx", "harbor", "naturebench"}


@pytest.mark.parametrize("src", PBX, ids=lambda p: p.name)
def test_paperbenchx_packages_import_with_their_rubric_and_without_credentials(src, tmp_path):
    rep = import_task("paperbenchx", src, tmp_path / "t")
    assert check_task(tmp_path / "t").ok, check_task(tmp_path / "t").errors
    task = load_task(tmp_path / "t")
    source_leaves = load_rubric(src / "tests" / "rubric.json").leaves
    assert [lf.id for lf in task.rubric.leaves] == [lf.id for lf in source_leaves]
    assert sum(lf.effective_weight for lf in task.rubric.leaves) == pytest.approx(1.0)
    toml = (tmp_path / "t" / "task.toml").read_text()
    assert "API_KEY" not in toml and "${" not in toml and "user" not in toml
    dropped = "\n".join(rep.not_carried)
    assert "[verifier.env]" in dropped and "ANTHROPIC_API_KEY" in dropped and "install.sh" in dropped
    assert (tmp_path / "t" / "tests" / "judge.md").is_file()
    assert "Not carried over" in (tmp_path / "t" / "IMPORT.md").read_text()


@pytest.mark.parametrize("src", PBX, ids=lambda p: p.name)
def test_paperbenchx_sources_the_rubric_declares_are_not_output_roots(src, tmp_path):
    # both packages read submission/src/ (evidence kind "source"), which neither ships in a solution or starter
    rep = import_task("paperbenchx", src, tmp_path / "t")
    assert load_task(tmp_path / "t").config.replay.outputs == ["results"]
    assert any(c.startswith('[metadata.replay] outputs = ["results"]: ') and "src" in c for c in rep.carried)


@pytest.mark.slow
def test_paperbenchx_output_roots_come_from_the_rubric_and_the_replay_regenerates_them(tmp_path, simulated_gpus):
    src = tmp_path / "pbx"
    shutil.copytree(EXTERNAL / "paperbenchx" / "12-mapgpt-r2r", src)
    text = (src / "tests" / "rubric.json").read_text()
    text = text.replace("submission/results/r2r_val_unseen_subset/per_case.csv", "submission/outputs/per_case.csv")
    text = text.replace("submission/results/r2r_val_unseen_subset/run.log", "logs/run.log")  # read under submission/
    (src / "tests" / "rubric.json").write_text(text)
    rep = import_task("paperbenchx", src, tmp_path / "t")
    task = load_task(tmp_path / "t")
    assert task.config.replay.outputs == ["logs", "outputs", "results"]
    imported = (tmp_path / "t" / "IMPORT.md").read_text()
    assert '[metadata.replay] outputs = ["logs", "outputs", "results"]' in imported
    assert not any("[metadata.replay] outputs" in d for d in rep.not_carried)
    assert check_task(task.root).ok, check_task(task.root).errors
    # what the package ships under outputs/ is replaced by what the replay computes; src/ is delivered as is
    sub = write_files(tmp_path / "sub", {"outputs/per_case.csv": "shipped\n", "src/agent.py": "pass\n",
                                         "reproduce.sh": "echo regenerated > outputs/per_case.csv\n"})
    # the package keeps its resources (8 CPUs, 32 GB, 100 GB of storage, a GPU): this host is refused in one line
    env = task.config.environment
    assert (env.cpus, env.memory_mb, env.storage_mb, env.gpus) == (8, 32768, 102400, 1)
    simulated_gpus(0)
    with pytest.raises(WorkbenchError) as refused:
        replay_trial(task, sub, tmp_path / "refused")
    assert "needs 8 CPUs (this host gives" in str(refused.value) and "\n" not in str(refused.value)
    assert not (tmp_path / "refused").exists()  # before any work
    toml = (tmp_path / "t" / "task.toml").read_text()  # sized down to this host, as its user would
    (tmp_path / "t" / "task.toml").write_text(toml.replace("cpus = 8", "cpus = 1").replace(
        "memory_mb = 32768", "memory_mb = 2048").replace("storage_mb = 102400", "storage_mb = 1024"))
    task = load_task(tmp_path / "t")
    simulated_gpus(1)
    replay_trial(task, sub, tmp_path / "trial")
    ev = tmp_path / "trial" / "evidence" / "submission"
    assert (ev / "outputs" / "per_case.csv").read_text() == "regenerated\n"
    assert (ev / "src" / "agent.py").read_text() == "pass\n"


def test_an_import_says_when_it_cannot_derive_output_roots(tmp_path):
    import_task("paperbench", EXTERNAL / "paperbench" / "rubrics" / "semantic-self-consistency.json", tmp_path / "t")
    assert load_task(tmp_path / "t").config.replay.outputs == ["results"]
    assert '[metadata.replay] outputs = ["results"]: the rubric reads no output directory' in (
        tmp_path / "t" / "IMPORT.md").read_text().split("## Not carried over")[1]


@pytest.mark.parametrize("name", ["rubrics/semantic-self-consistency.json", "graded/pinn.json"])
def test_paperbench_rubrics_and_graded_trees_import(name, tmp_path):
    src = EXTERNAL / "paperbench" / name
    rep = import_task("paperbench", src, tmp_path / "t")
    assert check_task(tmp_path / "t").ok
    data = json.loads(src.read_text())
    n_source = len(load_rubric(src, graded="graded" in name).leaves)
    task = load_task(tmp_path / "t")
    assert len(task.rubric.leaves) == n_source
    assert {lf.phase for lf in task.rubric.leaves} <= {"modeling", "execution", "validation"}
    saved = (tmp_path / "t" / "tests" / "rubric.json").read_text()
    if "graded" in name:
        assert '"explanation"' in json.dumps(data) and '"explanation"' not in saved
        assert any("grade field" in d for d in rep.not_carried)
    assert any("paper" in d for d in rep.not_carried) and any("solution" in d for d in rep.not_carried)


def test_a_harbor_task_imports_and_lists_its_verifier_and_solve_script(tmp_path):
    src = write_files(tmp_path / "harbor-task", {
        "task.toml": '[task]\nname = "org/hello"\n[metadata]\ndifficulty = "easy"\nnested = {a = 1}\n'
                     '[agent]\ntimeout_sec = 600.0\nuser = "agent"\n[verifier]\ntimeout_sec = 60.0\n'
                     '[verifier.env]\nOPENAI_API_KEY = "${OPENAI_API_KEY}"\n'
                     '[environment]\ncpus = 2\nmemory_mb = 2048\nallow_internet = true\n',
        "instruction.md": "Write hello.txt.\n",
        "environment/Dockerfile": "FROM ubuntu:22.04\n",
        "solution/solve.sh": "echo hello > /app/hello.txt\n",
        "tests/test.sh": "grep -q hello /app/hello.txt && echo 1 > /logs/verifier/reward.txt\n"})
    out = run_cli("task", "import", "--from", "harbor", str(src), str(tmp_path / "t"))
    assert out.returncode == 0, out.stderr
    for text in ("tests/test.sh", "solution/reproduce.sh", "allow_internet", "[verifier.env] OPENAI_API_KEY",
                 "nested", "task check: ok"):
        assert text in out.stdout, text
    task = load_task(tmp_path / "t")
    assert task.config.task.name == "org/hello" and task.config.environment.cpus == 2
    assert [lf.node.scoring_method for lf in task.rubric.leaves] == ["expert"]
    assert (tmp_path / "t" / "tests" / "test.sh").is_file()


NB_EVALUATOR = '''
import json, math
from pathlib import Path

GT = Path(__file__).parent / "ground_truth"


def run_evaluation():
    out = {}
    for inst in ("cells", "proteins", "zero"):
        pred = Path("output") / inst / "pred.json"
        if not pred.is_file():
            out[inst] = {"score": None, "error": "no prediction"}
            continue
        truth = json.loads((GT / inst / "truth.json").read_text())["value"]
        out[inst] = {"score": 1 - abs(json.loads(pred.read_text())["value"] - truth), "rmse": float("nan")}
    return out
'''


def _naturebench(root: Path) -> Path:
    perf = [{"dataset_name": n, "metrics": [{"name": "score", "is_primary": True, "metric_direction": d,
                                             "sota_score": [{"value": v, "method": "paper"}]}]}
            for n, d, v in (("cells", "higher_is_better", "0.85 ± 0.01"), ("proteins", "lower_is_better", "<0.3"),
                            ("zero", "higher_is_better", "0"))]
    return write_files(root, {
        "problem/README.md": "# Predict the value\n\n## Output Format\nWrite output/<instance>/pred.json.\n",
        "problem/data_description.md": "One number per instance.\n",
        "problem/data/cells/x.csv": "a\n1\n",
        "evaluation/evaluator.py": NB_EVALUATOR,
        "evaluation/ground_truth/cells/truth.json": '{"value": 0.9}',
        "evaluation/ground_truth/proteins/truth.json": '{"value": 0.5}',
        "evaluation/ground_truth/zero/truth.json": '{"value": 0.0}',
        "environment/Dockerfile.v3": "FROM python:3.11\n",
        "metadata.json": json.dumps({"task_id": "nb-toy", "performance_entries": perf,
                                     "domain_metadata": {"domain": "Cellular omics", "subdomain": "single cell"},
                                     "compute_resource_requirements": {"gpu": "RTX 4090"}})})


@pytest.mark.slow
def test_a_naturebench_package_imports_as_a_sota_task_that_scores_end_to_end(tmp_path, simulated_gpus):
    rep = import_task("naturebench", _naturebench(tmp_path / "nb"), tmp_path / "t")
    assert check_task(tmp_path / "t").ok, check_task(tmp_path / "t").errors
    dropped = "\n".join(rep.not_carried)
    assert "instance zero: SOTA is 0" in dropped and "GPU" in dropped
    task = load_task(tmp_path / "t")
    assert task.scoring == "sota" and task.config.replay.outputs == ["output"]
    assert task.config.metadata.field == "single cell" and task.config.environment.gpus == 1
    assert "$WORKBENCH_ENV/data/" in task.paths.instruction.read_text()
    spec = json.loads(task.paths.sota.read_text())["instances"]
    assert set(spec) == {"cells", "proteins"} and spec["proteins"]["direction"] == "lower_is_better"
    # run it on the host's /usr: a submission predicting 0.9 and 0.45
    (task.paths.install_sh).unlink()
    task = load_task(tmp_path / "t")
    sub = write_files(tmp_path / "sub", {"reproduce.sh": "mkdir -p output/cells output/proteins\n"
                                         "echo '{\"value\": 0.9}' > output/cells/pred.json\n"
                                         "echo '{\"value\": 0.45}' > output/proteins/pred.json\n"})
    simulated_gpus(0)  # it asks for a GPU: a host without one refuses it, never runs it on the CPU
    with pytest.raises(WorkbenchError, match=r"needs 1 GPU\(s\) \(this host has none"):
        replay_trial(task, sub, tmp_path / "refused")
    simulated_gpus(1)
    replay_trial(task, sub, tmp_path / "trial")
    s = score_trial(task, tmp_path / "trial")
    cells, proteins = s.sota["instances"]["cells"], s.sota["instances"]["proteins"]
    assert cells["value"] == pytest.approx(1.0) and cells["g"] == pytest.approx((1.0 - 0.85) / 0.85)
    # "lower is better" against "<0.3": the evaluator's score 0.95 is far worse than 0.3
    assert proteins["g"] == pytest.approx(-(0.95 - 0.3) / 0.3)
    assert s.sota["band"] == "below"


def test_bad_input_is_refused_and_leaves_nothing_behind(tmp_path):
    with pytest.raises(WorkbenchError, match="unknown source"):
        import_task("kaggle", tmp_path, tmp_path / "x")
    with pytest.raises(WorkbenchError, match="not found"):
        import_task("harbor", tmp_path / "nope", tmp_path / "x")
    nb = _naturebench(tmp_path / "nb")
    (nb / "evaluation" / "evaluator.py").unlink()
    with pytest.raises(WorkbenchError, match="evaluator.py"):
        import_task("naturebench", nb, tmp_path / "half")
    assert not (tmp_path / "half").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    out = run_cli("task", "import", "--from", "harbor", str(nb), str(tmp_path / "full"))
    assert out.returncode != 0 and "--force" in out.stderr + out.stdout
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
