"""Check kinds against small frozen evidence sets."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.conftest import write_files
from workbench.evidence import Evidence, MissingEvidence, freeze
from workbench.scoring import CHECK_KINDS, run_check
from workbench.scoring.checks import CheckSpecError, parse_spec, task_check


@pytest.fixture
def ev(tmp_path) -> Evidence:
    stage = tmp_path / "stage"
    write_files(stage, {
        "submission/results/summary.json": '{"Re": 1.4019, "method": "CCSD", "nested": {"list": [1, 2, 3]}}',
        "submission/results/conv.csv": "basis,card,De\ncc-pvtz,3,37907\ncc-pvdz,2,36239\ncc-pvqz,4,38168\n",
        "submission/results/bad.csv": "a,b\n1,2,3,4\n\"unterminated",
        "submission/results/empty.txt": "",
        "replay/stdout.log": "PySCF version 2.14.0\nconverged SCF energy = -1.17\nWARNING: nan\n",
    })
    np.save(stage / "submission/results/arr.npy", np.zeros((4, 3)))
    np.savez(stage / "submission/results/arrs.npz", a=np.ones(5), b=np.array([1.0, np.nan]))
    os.symlink("/etc/passwd", stage / "submission/results/escape.txt")
    freeze(stage, tmp_path / "evidence")
    return Evidence(tmp_path / "evidence", {"status": "succeeded", "wall_sec": 3.0, "exit_code": 0})


def check(ev, **spec):
    return run_check(spec, ev, {})


def test_registry_has_the_documented_kinds():
    assert set(CHECK_KINDS) == {"file_exists", "json_value", "csv_value", "array_shape", "monotone",
                                "log_pattern", "replay_succeeded", "mcq", "facts", "ran", "loaded", "written_by",
                                "cpu_seconds", "distinct", "recompute", "delivered_size", "cpu_in", "data_in_code",
                                "numeric_checks"}


def test_file_exists(ev):
    assert check(ev, kind="file_exists", path="results/summary.json").score == 1
    assert check(ev, kind="file_exists", path="results/*.csv", min_files=2).score == 1
    assert check(ev, kind="file_exists", path="results/*.csv", min_files=3).score == 0
    with pytest.raises(MissingEvidence):
        check(ev, kind="file_exists", path="results/empty.txt")  # 0 bytes is not a result
    with pytest.raises(MissingEvidence):
        check(ev, kind="file_exists", path="results/nope.json")


def test_json_value_tolerances(ev):
    ok = check(ev, kind="json_value", path="results/summary.json", key="Re", target=1.4011, abs_tol=0.002)
    assert ok.score == 1 and "tolerance" in ok.rationale
    assert check(ev, kind="json_value", path="results/summary.json", key="Re", target=1.4011, abs_tol=0.0005).score == 0
    assert check(ev, kind="json_value", path="results/summary.json", key="Re", target=1.4, rel_tol=0.01).score == 1
    assert check(ev, kind="json_value", path="results/summary.json", key="Re", min=1.3, max=1.5).score == 1
    assert check(ev, kind="json_value", path="results/summary.json", key="Re", max=1.4).score == 0
    assert check(ev, kind="json_value", path="results/summary.json", key="method", one_of=["ccsd", "FCI"]).score == 1
    assert check(ev, kind="json_value", path="results/summary.json", key="nested.list.-1", target=3).score == 1
    with pytest.raises(MissingEvidence, match="key not found"):
        check(ev, kind="json_value", path="results/summary.json", key="De", target=1)


def test_csv_value_by_row_and_where(ev):
    assert check(ev, kind="csv_value", path="results/conv.csv", column="De", row=-1, target=38168).score == 1
    assert check(ev, kind="csv_value", path="results/conv.csv", column="De", where={"basis": "CC-PVDZ"},
                 target=36239, abs_tol=1).score == 1
    with pytest.raises(MissingEvidence, match="no row"):
        check(ev, kind="csv_value", path="results/conv.csv", column="De", where={"basis": "sto-3g"}, target=1)
    with pytest.raises(MissingEvidence, match="not a readable CSV"):
        check(ev, kind="csv_value", path="results/bad.csv", column="a", target=1)


def test_array_shape(ev):
    assert check(ev, kind="array_shape", path="results/arr.npy", shape=[4, None]).score == 1
    assert check(ev, kind="array_shape", path="results/arr.npy", shape=[3, 3]).score == 0
    assert check(ev, kind="array_shape", path="results/arrs.npz", key="a", min_rows=5).score == 1
    assert check(ev, kind="array_shape", path="results/arrs.npz", key="b").score == 0  # NaN
    assert check(ev, kind="array_shape", path="results/conv.csv", shape=[3, 3]).score == 1
    with pytest.raises(MissingEvidence, match="no such array"):
        check(ev, kind="array_shape", path="results/arrs.npz", key="c")


def test_monotone_convergence(ev):
    spec = dict(kind="monotone", path="results/conv.csv", column="De", direction="increasing")
    assert check(ev, **spec).score == 0  # file order is T, D, Q
    assert check(ev, **spec, order_by="card").score == 1
    assert check(ev, **{**spec, "direction": "decreasing"}, order_by="card").score == 0
    assert check(ev, kind="monotone", path="results/summary.json", key="nested.list", direction="increasing",
                 strict=True).score == 1
    assert check(ev, **spec, order_by="card", min_points=4).score == 0


def test_log_pattern(ev):
    assert check(ev, kind="log_pattern", pattern=r"PySCF version 2\.\d+").score == 1
    assert check(ev, kind="log_pattern", pattern="converged", min_count=2).score == 0
    assert check(ev, kind="log_pattern", pattern="(?i)nan", absent=True).score == 0


def test_replay_succeeded_reads_the_workbench_provenance(ev, tmp_path):
    assert check(ev, kind="replay_succeeded").score == 1
    failed = Evidence(ev.root, {"status": "failed", "failure_reasons": ["timed out after 2 s"], "wall_sec": 2})
    out = check(failed, kind="replay_succeeded")
    assert out.score == 0 and "timed out" in out.rationale


def test_symlinks_out_of_the_evidence_are_refused(ev):
    assert not (ev.root / "submission" / "results" / "escape.txt").is_symlink()  # sealed: never even made
    with pytest.raises(MissingEvidence, match="symbolic link to '/etc/passwd'"):
        ev.read_text("results/escape.txt")
    with pytest.raises(MissingEvidence, match="outside the evidence"):
        ev.read_text("results/../../../../etc/passwd")


@pytest.mark.parametrize("spec,msg", [
    ({"path": "x"}, "needs a 'kind'"),
    ({"kind": "nope"}, "unknown kind 'nope'"),
    ({"kind": "json_value", "path": "x", "key": "k"}, "give target, min, max or one_of"),
    ({"kind": "json_value", "path": "x", "key": "k", "target": 1, "abs_tol": -1}, "check.abs_tol"),
    ({"kind": "log_pattern", "pattern": "("}, "does not compile"),
    ({"kind": "monotone", "path": "x", "direction": "up", "column": "c"}, "check.direction"),
    ({"kind": "file_exists", "path": "x", "typo": 1}, "check.typo"),
])
def test_malformed_specs_are_rubric_errors(spec, msg):
    with pytest.raises(CheckSpecError, match=msg.replace("(", r"\(")):
        parse_spec(spec)


def test_task_checks_accept_several_return_types(ev):
    @task_check
    def as_bool(e):
        return True

    @task_check("named")
    def as_tuple(e, k=0):
        return (0.5, f"half {k}")

    checks = {"as_bool": as_bool, "named": as_tuple}
    assert run_check({"kind": "task", "name": "as_bool"}, ev, checks).score == 1
    out = run_check({"kind": "task", "name": "named", "params": {"k": 7}}, ev, checks)
    assert (out.score, out.rationale) == (0.5, "half 7")
    with pytest.raises(CheckSpecError, match="no task check named"):
        run_check({"kind": "task", "name": "missing"}, ev, checks)


def test_delivered_size_counts_contents_and_names_but_not_the_outputs(tmp_path):
    """Results cached in a source, or in directory names, exceed the limit; outputs do not count."""
    rng = np.random.default_rng(0)
    numbers = ",".join(f"{x:.17g}" for x in rng.normal(size=2000))  # ~38 KB of incompressible digits

    def size(files, dirs=()):
        stage = tmp_path / f"stage{len(list(tmp_path.iterdir()))}"
        write_files(stage, {"submission/reproduce.sh": "python3 src/run.py\n", **files})
        for d in dirs:
            (stage / "submission" / d).mkdir(parents=True)
        freeze(stage, stage.with_name(stage.name + "-ev"))
        return check(Evidence(stage.with_name(stage.name + "-ev"), {}), kind="delivered_size", max_kb=16)

    honest = size({"submission/src/run.py": "import numpy\nprint(1)\n",
                   "submission/results/curve.csv": numbers})  # a regenerated output: not counted
    assert honest.score == 1 and "limit 16 KB" in honest.rationale
    assert size({"submission/src/cache.py": f"CURVE = [{numbers}]\n"}).score == 0
    in_names = [f"src/{chunk}" for chunk in (numbers[i:i + 200].replace(".", "_") for i in range(0, 38000, 200))]
    assert size({"submission/src/run.py": "print(1)\n"}, dirs=in_names).score == 0
