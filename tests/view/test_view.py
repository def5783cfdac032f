"""`workbench view` over a real run: the run list, a trial's page, what a batch in progress shows, and
that nothing a submission wrote is served as markup or lets a request leave the trial."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import urllib.request

import pytest

from tests.conftest import REPO, as_in_a_terminal
from tests.review.conftest import ORACLE_R, trial
from tests.view.conftest import add_running_trial, holding_lock, make_batch
from workbench.evidence import make_readonly, make_writable, manifest_text, read_links, read_manifest
from workbench.io import sha256_file

AS_OWNER = "<the server's token>"


def get(server, path: str, host: str | None = None, token: str | None = AS_OWNER,
        headers: dict[str, str] | None = None) -> tuple[int, dict, str]:
    """GET as the view's owner (with its token) unless ``token`` says otherwise (None: no token)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    conn.putrequest("GET", path, skip_host=True)
    conn.putheader("Host", host or f"127.0.0.1:{server.port}")
    if token is not None:
        conn.putheader("Authorization", f"Bearer {server.token if token is AS_OWNER else token}")
    for k, v in (headers or {}).items():
        conn.putheader(k, v)
    conn.endheaders()
    r = conn.getresponse()
    body = r.read().decode("utf-8", errors="replace")
    conn.close()
    return r.status, dict(r.getheaders()), body


@pytest.mark.slow
def test_the_run_list_shows_each_trial_with_status_score_coverage_and_time(view):
    status, headers, body = get(view, "/api/runs")
    assert status == 200
    (run,) = json.loads(body)
    trials = {t["id"]: t for t in run["trials"]}
    assert run["name"] == "run" and set(trials) == {"mini__oracle__1", "mini__nop__1"}
    assert trials["mini__oracle__1"]["status"] == "complete"
    assert trials["mini__oracle__1"]["R"] == pytest.approx(ORACLE_R) and trials["mini__nop__1"]["R"] == 0
    assert trials["mini__oracle__1"]["coverage"] < 1 and trials["mini__oracle__1"]["awaiting"] == 2
    assert trials["mini__oracle__1"]["seconds"] is not None and run["counts"]["complete"] == 2

    status, headers, page = get(view, "/")
    assert status == 200 and "/run/run/trial/mini__oracle__1" in page and f"{ORACLE_R:.4f}" in page
    assert "data-poll='/fragment/runs'" in page and "<script src='/static/view.js'>" in page
    assert "script-src 'self'" in headers["Content-Security-Policy"]  # no inline or remote script runs
    assert "http://" not in page.replace("http://127.0.0.1:9/review/", "") and "https://" not in page


def test_a_batch_in_progress_shows_running_queued_and_tokens_so_far(view, review_run):
    make_batch(review_run)
    add_running_trial(review_run)
    with holding_lock(review_run, "mini__slow__1"):
        (run,) = json.loads(get(view, "/api/runs")[2])
        trials = {t["id"]: t for t in run["trials"]}
        assert trials["mini__slow__1"]["status"] == "running" and trials["mini__slow__1"]["stage"] == "replay"
        assert trials["mini__slow__1"]["tokens"] == 4000 and trials["mini__slow__1"]["cost_usd"] == pytest.approx(0.032)
        assert trials["mini__late__1"]["status"] == trials["mini__queued__1"]["status"] == "queued"
        assert run["counts"] == {"running": 1, "queued": 2, "complete": 2, "infra_error": 0, "interrupted": 0}
        assert run["batch"] and run["tokens"] == 4000
        page = get(view, "/fragment/runs")[2]
        assert "running: replay" in page and "5 trial(s): 1 running · 2 queued · 2 complete" in page
        # the running stage's log, live: its last lines only, escaped
        slow = review_run / "trials" / "mini__slow__1"
        (slow / "replay").mkdir(exist_ok=True)
        (slow / "replay" / "stdout.log").write_text("".join(f"step {i}\n" for i in range(5000)) + "<b>done?</b>\n")
        trial_page = get(view, "/run/run/trial/mini__slow__1/fragment/summary")[2]
        assert "replay stdout" in trial_page and "step 4999" in trial_page and "step 10\n" not in trial_page
        assert "&lt;b&gt;done?&lt;/b&gt;" in trial_page and "<b>done?</b>" not in trial_page
    # nobody holds its lock any more: the batch was killed, and the trial says so, with what resumes it
    (run,) = json.loads(get(view, "/api/runs")[2])
    assert {t["id"]: t["status"] for t in run["trials"]}["mini__slow__1"] == "interrupted"
    trial_page = get(view, "/run/run/trial/mini__slow__1")[2]
    assert f"workbench batch MATRIX.toml --out {review_run} --resume" in trial_page
    runs = get(view, "/")[2]  # the report: the command that writes it, then a link to it
    assert f"workbench report {review_run} --out {review_run / 'report.html'}" in runs
    assert f"workbench lab {review_run}" in runs
    (review_run / "report.html").write_text("<html><script>document.title = 'plotly'</script>a report</html>")
    assert "href='/run/run/report'" in get(view, "/")[2]
    status, headers, body = get(view, "/run/run/report")
    assert status == 200 and "a report" in body
    assert headers["Content-Security-Policy"].startswith("sandbox allow-scripts;")  # an origin of its own
    assert "allow-same-origin" not in headers["Content-Security-Policy"]


def test_a_trial_page_has_leaves_by_phase_evidence_provenance_receipts_and_trajectory(view, review_run):
    status, _, page = get(view, "/run/run/trial/mini__oracle__1")
    assert status == 200
    for phase in ("modeling", "execution", "validation"):
        assert f"data-phase='{phase}'" in page
    assert page.index("data-leaf='m1'") < page.index("data-leaf='e1'") < page.index("data-leaf='v2'")
    assert "href='http://127.0.0.1:9/review/?run=run&amp;trial=mini__oracle__1&amp;leaf=v2'" in page
    hashes = read_manifest(trial(review_run) / "evidence")
    assert "data-path='submission/results/log.txt'" in page
    assert hashes["submission/results/log.txt"][:16] in page and "regenerated" in page
    for section in ("id='provenance'", "exit_code", "id='receipts'", "id='trajectory'", "copy_solution"):
        assert section in page  # the oracle's one step: it copied the reference solution
    assert "No executed notebooks (the inline engine runs none)" in page

    data = json.loads(get(view, "/api/run/run/trial/mini__oracle__1")[2])
    assert data["R"] == pytest.approx(ORACLE_R) and [lf["id"] for lf in data["leaves"]][:2] == ["m1", "e1"]
    text = get(view, "/run/run/trial/mini__oracle__1/file/evidence/submission/results/log.txt")
    assert text[0] == 200 and text[2] == "fine\n" and text[1]["Content-Type"].startswith("text/plain")
    assert get(view, "/run/run/trial/mini__nope__1")[0] == 404
    assert get(view, "/run/nope/trial/mini__oracle__1")[0] == 404


def test_an_executed_stage_notebook_is_rendered_offline(view, review_run):
    import shutil

    nb = REPO / "notebooks" / "stages" / "03_scoring.ipynb"  # unexecuted, but a notebook all the same
    (trial(review_run) / "notebooks").mkdir()
    shutil.copy(nb, trial(review_run) / "notebooks" / "03_scoring.ipynb")
    status, headers, body = get(view, "/run/run/trial/mini__oracle__1/notebook/03_scoring.ipynb")
    assert status == 200 and "jp-Notebook" in body and "parameters" in body
    assert "<script src=\"http" not in body and "sandbox" in headers["Content-Security-Policy"]
    assert "03_scoring.ipynb" in get(view, "/run/run/trial/mini__oracle__1")[2]


HOSTILE = "<script>alert(1)</script>.txt"  # a directory "<script>alert(1)<" holding "script>.txt"
MARKUP = "<img src=x onerror=alert(2)><script>alert(3)</script> & done"


def _plant(trial_dir):
    """A file with a hostile name and markup inside in the frozen evidence (and its manifest), markup in
    a rationale and in the trajectory: all of it the submission's to choose."""
    ev = trial_dir / "evidence"
    make_writable(ev)
    (ev / "submission" / "results" / HOSTILE).parent.mkdir()
    (ev / "submission" / "results" / HOSTILE).write_text(MARKUP)
    (ev / "submission" / "results" / "page.html").write_text(MARKUP)
    hashes = read_manifest(ev) | {f"submission/results/{n}": sha256_file(ev / "submission" / "results" / n)
                                  for n in (HOSTILE, "page.html")}
    (ev / "MANIFEST.sha256").write_text(manifest_text(hashes, read_links(ev)))
    make_readonly(ev)
    scores = json.loads((trial_dir / "scores.json").read_text())
    scores["leaves"][0]["rationale"] = "<b onmouseover=alert(4)>value</b>"
    (trial_dir / "scores.json").write_text(json.dumps(scores))
    with open(trial_dir / "session" / "trajectory.jsonl", "a") as fh:
        fh.write(json.dumps({"turn": 2, "role": "assistant", "message": "<script>alert(5)</script>"}) + "\n")


@pytest.mark.attack
def test_markup_from_the_submission_is_shown_escaped(view, review_run):
    _plant(trial(review_run))
    page = get(view, "/run/run/trial/mini__oracle__1")[2]
    for raw in ("<script>alert", "<img src=x", "<b onmouseover"):
        assert raw not in page
    assert "data-path='submission/results/&lt;script&gt;alert(1)&lt;/script&gt;.txt'" in page
    assert "&lt;b onmouseover=alert(4)&gt;" in page
    assert "&lt;script&gt;alert(5)&lt;/script&gt;" in page
    # the preview parses the file in the confined reader and escapes what it shows
    from urllib.parse import quote

    for name in (HOSTILE, "page.html"):
        status, _, preview = get(view, "/run/run/trial/mini__oracle__1/preview?path="
                                 + quote(f"submission/results/{name}", safe=""))
        assert status == 200 and "&lt;img src=x onerror=alert(2)&gt;" in preview and "<script" not in preview
    # served raw, the file is plain text that no browser runs
    status, headers, body = get(view, "/run/run/trial/mini__oracle__1/file/evidence/submission/results/page.html")
    assert status == 200 and headers["Content-Type"].startswith("text/plain") and "sandbox" in \
        headers["Content-Security-Policy"] and headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.attack
def test_requests_cannot_leave_the_trial(view, review_run, tmp_path):
    (tmp_path / "outside.txt").write_text("private-outside")
    sub = trial(review_run) / "session" / "submission"
    os.symlink(tmp_path / "outside.txt", sub / "leak.txt")  # the agent's package may hold links
    os.symlink(tmp_path, sub / "up")
    base = "/run/run/trial/mini__oracle__1"
    refused = [f"{base}/file/../../../run.json", f"{base}/file/%2e%2e/%2e%2e/%2e%2e/run.json",
               f"{base}/file/session%2F..%2F..%2Foutside.txt", f"{base}/file/session/submission/leak.txt",
               f"{base}/file/session/submission/up/outside.txt", f"{base}/notebook/..%2F..%2Frun.json"]
    for path in refused:
        status, _, body = get(view, path)
        assert status in (403, 404) and "private-outside" not in body, path
    assert get(view, f"{base}/file/session/submission/leak.txt")[0] == 403
    assert get(view, f"{base}/file/../../../run.json")[0] == 403
    assert get(view, f"{base}/preview?path=../../run.json")[0] == 404  # only files of the manifest
    # a page elsewhere that rebinds its name to 127.0.0.1 is refused
    assert get(view, "/api/runs", host="evil.example:80")[0] == 403


@pytest.mark.attack
def test_only_the_holder_of_the_token_is_served(view):
    """Rationales quote hidden targets: a process on the machine that does not hold the token (a CLI agent on
    host networking) gets nothing, with or without a guessed token or another site's origin."""
    for path in ("/", "/api/runs", "/run/run/trial/mini__oracle__1", "/api/run/run/trial/mini__oracle__1",
                 "/run/run/trial/mini__oracle__1/file/scores.json"):
        for token in (None, "", "wrong", view.token[:-1]):
            status, _, body = get(view, path, token=token)
            assert status == 403 and "ORACLE" not in body.upper() and "token" in body, (path, token, status)
    assert get(view, "/api/runs", headers={"Origin": "http://evil.example"})[0] == 403
    assert get(view, "/api/runs", headers={"Cookie": f"workbench-view-{view.port}=wrong"}, token=None)[0] == 403
    # the printed URL: its token becomes a cookie (HttpOnly, SameSite=Strict) that serves the rest
    status, headers, _ = get(view, f"/?token={view.token}", token=None)
    cookie = headers["Set-Cookie"]
    assert status == 200 and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    jar = cookie.split(";")[0]
    assert get(view, "/api/runs", headers={"Cookie": jar}, token=None)[0] == 200
    assert view.url.startswith(view.base) and view.token in view.url


@pytest.mark.slow
def test_the_reviewer_opens_the_leaf_a_link_names(review_run):
    from workbench.review import Reviewer, query_selection

    assert query_selection("run=run&trial=mini__oracle__1&leaf=v1") == ("mini__oracle__1", "v1")
    assert query_selection("") is None and query_selection("trial=x") is None
    rv = Reviewer(review_run, select=query_selection("trial=mini__oracle__1&leaf=v1"))
    # v1 is scored by its check, so not awaiting review: the reviewer shows all leaves to open it
    assert rv.show.value == "all" and rv.leaves.value == ("mini__oracle__1", "v1") and "v1" in rv.detail.value
    rv = Reviewer(review_run, select=("mini__oracle__1", "v2"))
    assert rv.show.value == "awaiting" and rv.leaves.value == ("mini__oracle__1", "v2")
    rv = Reviewer(review_run, select=("mini__oracle__1", "nope"))
    assert "no leaf &#x27;nope&#x27;" in rv.message.value and rv.show.value == "awaiting"


@pytest.mark.slow
def test_the_cli_prints_the_bound_url_and_stops_on_ctrl_c(review_run):
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "view", str(review_run.parent), "--port", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_in_a_terminal)
    try:
        line = proc.stdout.readline()
        url = line.split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0/")
        assert "mini__oracle__1" in urllib.request.urlopen(url, timeout=30).read().decode()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out.strip() == "stopped" and "Traceback" not in err


def test_the_cli_refuses_a_directory_that_does_not_exist():
    from tests.conftest import run_cli

    res = run_cli("view", "/nope", "--port", "0", timeout=60)
    said = " ".join(res.stderr.replace("│", " ").split())
    assert res.returncode == 2 and "'/nope' does not exist" in said and "Traceback" not in said


@pytest.mark.slow
def test_the_cli_says_when_the_port_is_taken(review_run):
    import socket

    from tests.conftest import run_cli

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        res = run_cli("view", str(review_run), "--port", str(s.getsockname()[1]), timeout=60)
    assert res.returncode == 1 and res.stderr.startswith("error: cannot serve on 127.0.0.1:")
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_evidence_tree_puts_every_file_under_its_own_folder(tmp_path):
    """Folders nested in the sources and in the results: each entry's row comes after its folder's row and
    before any other folder of that depth (it once listed every folder first and the files after them)."""
    import re

    from tests.conftest import config, write_task
    from workbench.task import load_task
    from workbench.trial.pipeline import run_trial
    from workbench.view.server import ViewServer

    root = write_task(tmp_path / "mini")
    (root / "solution" / "src" / "deep").mkdir(parents=True)
    (root / "solution" / "src" / "deep" / "helper.py").write_text("X = 1\n")
    (root / "solution" / "src" / "main.py").write_text("print(1)\n")
    with (root / "solution" / "reproduce.sh").open("a") as f:
        f.write("mkdir -p results/plots/raw results/tables\necho 1 > results/plots/raw/a.csv\n"
                "echo 2 > results/plots/b.csv\necho 3 > results/tables/t.csv\necho 4 > results/zz.txt\n")
    rec = run_trial(load_task(root), config("oracle"), tmp_path / "runs" / "run", engine="inline")
    server = ViewServer(tmp_path / "runs")
    server.start()
    try:
        status, _, page = get(server, f"/run/run/trial/{rec.id}")
    finally:
        server.stop()
    assert status == 200
    rows = re.findall(r"<tr class='(dir|file)' data-path='([^']*)'", page)
    paths = [p for _, p in rows]
    for want in ("submission/src/deep/helper.py", "submission/results/plots/raw/a.csv", "submission/results/zz.txt"):
        assert want in paths, paths
    open_dirs: list[str] = []  # the folders the row at hand is inside, outermost first
    for kind, path in rows:
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        while open_dirs and not (parent == open_dirs[-1] or parent.startswith(open_dirs[-1] + "/")):
            open_dirs.pop()
        assert (open_dirs[-1] if open_dirs else "") == parent, (path, open_dirs)
        if kind == "dir":
            open_dirs.append(path)
