"""The agent's side of the hidden scoring service (:mod:`workbench.session.scoring_service`): one HTTP call.

It lives with the agents (the ``submit_for_score`` tool calls it) so that agents never import the scorer.
"""

from __future__ import annotations

import json
from typing import Any


def submit(url: str, token: str, description: str = "", timeout: float = 3600.0) -> dict[str, Any]:
    """A client call (what the agent's ``submit_for_score`` tool does)."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(f"{url}/evaluate", data=json.dumps({"description": description}).encode(),
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return {"error": f"HTTP {exc.code}: {exc.read().decode(errors='replace')[:300]}"}
