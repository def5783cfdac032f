"""How often a real model's judge replies are valid verdicts, with and without a JSON schema
(``response_format`` json_schema): the demo task's judge leaves (h2-pes A5 and C9) over the replays of
its reference solution and calibration submissions, judged by the test model server (llama-server,
Gemma 3 270M, one thread, temperature 0; built by .ci/model-server).

    .venv/bin/python benchmarks/judge_schema.py --json benchmarks/judge_schema.json

A reply is the judge's answer to be parsed (tool rounds are not replies); it is valid when it parses as a
verdict; a leaf is judged when one of its replies (first answer and up to ``--reask`` re-asks) was valid.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def tally(trials: list[Path], fmt: str) -> dict:
    """Counts from the judge's own records (TRIAL/judge/*.json) of one response format: a gated leaf is
    judged too, and a leaf whose conversation outgrew the context has no valid reply."""
    leaves = judged = replies = tokens = 0
    for trial in trials:
        for path in sorted((trial / "judge").glob("*.json")):
            rec = json.loads(path.read_text())
            usage = rec["usage"]
            if usage.get("response_format") != fmt:
                continue
            ok = rec["verdict"] is not None
            leaves, judged = leaves + 1, judged + ok
            replies += usage.get("invalid_replies", 0) + ok
            tokens += usage["prompt_tokens"] + usage["completion_tokens"]
    return {"leaves": leaves, "judged": judged, "replies": replies, "valid_replies": judged,
            "valid_reply_rate": round(judged / replies, 3) if replies else None, "tokens": tokens}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--reask", type=int, default=1)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--tally", type=Path, help="only count the records of an earlier run's directory")
    args = ap.parse_args()
    if args.tally:
        trials = sorted(p for p in args.tally.iterdir() if (p / "judge").is_dir())
        print(json.dumps({f: tally(trials, f) for f in ("json_schema", "free")}, indent=2))
        return
    from tests.conftest import free_port
    from tests.model_server import MODEL_NAME, ModelServer
    from workbench.replay.trial import replay_trial
    from workbench.sandbox.environments import install_env
    from workbench.scoring import score_trial
    from workbench.scoring.judge.leaf import JudgeSettings
    from workbench.task import load_task

    task = load_task(REPO / "tasks" / "h2-pes")
    install_env(task)
    submissions = {"oracle": task.root / "solution",
                   **{p.name: p for p in sorted((task.root / "calibration").iterdir()) if p.is_dir()}}
    work = Path(tempfile.mkdtemp(prefix="judge-schema-"))
    for name, sub in submissions.items():
        replay_trial(task, sub, work / name)
    results = {}
    with ModelServer(free_port(), work / "llama-server.log") as url:
        for schema in (True, False):
            settings = JudgeSettings(model=MODEL_NAME, base_url=url, api_key="none", json_schema=schema,
                                     images=False, excerpt_bytes=3000, max_tokens=args.max_tokens,
                                     max_reask=args.reask)
            fmt = "json_schema" if schema else "free"
            t0 = time.perf_counter()
            for name in submissions:
                score_trial(task, work / name, judge=settings, force=True)
            results[fmt] = {**tally([work / n for n in submissions], fmt),
                            "seconds": round(time.perf_counter() - t0, 1)}
            print(fmt, results[fmt], flush=True)
    out = {"model": MODEL_NAME, "max_tokens": args.max_tokens, "max_reask": args.reask,
           "submissions": list(submissions), "results": results}
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
