"""Run by Inspect AI's interpreter (.ci/peers), not by the suite's: Inspect's own log listing and reader
over a directory of eval logs. Prints, as JSON, the logs it lists and, for each, what it read (the full
log and its header alone, as ``inspect view`` reads them); a log it cannot read fails the script.

    python inspect_check.py LOG_DIR
"""

import json
import sys


def read(log_dir):
    from inspect_ai.log import list_eval_logs, read_eval_log

    listed = list_eval_logs(log_dir)
    out = {"listed": [i.name for i in listed], "logs": {}}
    for info in listed:
        log = read_eval_log(info)
        header = read_eval_log(info, header_only=True)
        out["logs"][info.name.removeprefix("file://")] = {
            "status": log.status, "task": log.eval.task, "model": log.eval.model, "epochs": log.eval.config.epochs,
            "results": {s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores},
            "header_samples": header.samples, "header_total": header.results.total_samples,
            "usage": {m: u.total_tokens for m, u in log.stats.model_usage.items()},
            "samples": [{
                "id": s.id, "epoch": s.epoch, "trial": s.metadata.get("trial"), "error": s.error and s.error.message,
                "scores": {k: v.value for k, v in (s.scores or {}).items()},
                "tree_root": ((s.scores or {}).get("R") and s.scores["R"].metadata["graded_task_tree"]["score"]),
                "usage": {m: [u.input_tokens, u.output_tokens, u.total_tokens] for m, u in s.model_usage.items()},
                "messages": [{"role": m.role, "text": m.text, "tool_call_id": getattr(m, "tool_call_id", None),
                              "calls": [[c.id, c.function, c.arguments] for c in getattr(m, "tool_calls", None) or []]}
                             for m in s.messages],
            } for s in log.samples],
        }
    return out


if __name__ == "__main__":
    print(json.dumps(read(sys.argv[1])))
