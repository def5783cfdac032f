"""How the LLM judge runs: its model and endpoint, its bounds, and what of that may be recorded.

Every setting but the endpoint's address enters a judgement's fingerprint (a changed setting judges the
leaf again); the API key enters nothing that is written: no fingerprint, record, trial.json or notebook.
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...errors import WorkbenchError
from ...io import sha256_bytes
from ...pricing import Prices


class JudgeSettings(BaseModel):
    """How the judge runs. ``api_key`` never enters a fingerprint, a record or a notebook."""

    model_config = ConfigDict(extra="forbid")
    model: str
    base_url: str | None = None
    api_key: str | None = Field(default=None, exclude=True)
    temperature: float = 0.0
    seed: int | None = 1234
    max_tool_rounds: int = 6
    max_reask: int = 2
    # constrain the verdict by a JSON schema (response_format json_schema) where the endpoint offers it; an
    # endpoint that rejects the format is asked again in free JSON, and the leaf's usage says which was used
    json_schema: bool = True
    max_tokens: int | None = None  # per reply: a judge that rambles is cut off, and its reply re-asked
    max_attempts: int = 5
    call_timeout_sec: float = 300.0
    leaf_timeout_sec: float = 1200.0
    excerpt_bytes: int = 20_000
    image_bytes: int = 1_500_000
    images: bool = True  # False for a text-only model (a server that cannot read images answers 500)
    prices: Prices | None = None

    def public(self) -> dict[str, Any]:
        """What may be written into trial.json, run.json or a notebook (no key)."""
        return self.model_dump(exclude_none=True)

    @classmethod
    def from_env(cls, model: str | None = None, **overrides: Any) -> JudgeSettings | None:
        """Settings from arguments and WORKBENCH_JUDGE_{MODEL,BASE_URL,API_KEY} (else OPENAI_*), and
        WORKBENCH_JUDGE_{MAX_TOKENS,MAX_ATTEMPTS,JSON_SCHEMA,IMAGES}; None: no judge."""
        from ...agents.llm import EndpointNotConfigured

        model = model or os.environ.get("WORKBENCH_JUDGE_MODEL")
        if not model:
            return None
        base_url = (overrides.pop("base_url", None) or os.environ.get("WORKBENCH_JUDGE_BASE_URL")
                    or os.environ.get("OPENAI_BASE_URL"))
        api_key = os.environ.get("WORKBENCH_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if not base_url and not api_key:  # said before any trial runs, never a public API with a dummy key
            raise EndpointNotConfigured(f"judge model {model!r} has no endpoint: set WORKBENCH_JUDGE_BASE_URL (or "
                                        "OPENAI_BASE_URL) and/or WORKBENCH_JUDGE_API_KEY (or OPENAI_API_KEY)")
        for name in ("max_tokens", "max_attempts"):
            text = os.environ.get(f"WORKBENCH_JUDGE_{name.upper()}")
            if text:
                if not text.isdigit() or int(text) < 1:
                    raise WorkbenchError(f"WORKBENCH_JUDGE_{name.upper()}={text!r}: expected a positive integer")
                overrides.setdefault(name, int(text))
        if os.environ.get("WORKBENCH_JUDGE_IMAGES"):
            overrides.setdefault("images", os.environ["WORKBENCH_JUDGE_IMAGES"].lower() not in ("0", "no", "false"))
        if os.environ.get("WORKBENCH_JUDGE_JSON_SCHEMA"):
            overrides.setdefault("json_schema", os.environ["WORKBENCH_JUDGE_JSON_SCHEMA"].lower() not in ("0", "no",
                                                                                                       "false"))
        return cls(model=model, base_url=base_url, api_key=api_key, **overrides)

    def fingerprint(self) -> str:
        return sha256_bytes(json.dumps(self.model_dump(exclude={"base_url"}), sort_keys=True, default=str).encode())
