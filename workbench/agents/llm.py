"""Model calls on any OpenAI-compatible endpoint, retried the way a long evaluation needs.

The ``openai`` client's own retries are switched off so that every attempt is visible: 429, 5xx,
timeouts and connection errors are retried with exponential backoff, honouring ``Retry-After``, up to
a bounded number of attempts and never past the session's deadline. Each failed attempt is reported
(error class, status, delay) to the caller's log. When attempts are exhausted the endpoint is the
problem, not the agent: :class:`ModelEndpointError` is an infrastructure failure.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import WorkbenchError

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BASE_DELAY_SEC = 1.0
MAX_DELAY_SEC = 60.0


class ModelEndpointError(WorkbenchError):
    """The model endpoint kept failing (or refused the request outright): an infrastructure failure."""


class AgentRequestError(WorkbenchError):
    """The endpoint rejected what the agent sent (e.g. context too long): the agent's own failure."""


@dataclass
class Attempt:
    attempt: int
    error: str
    status: int | None
    delay_sec: float


class EndpointNotConfigured(WorkbenchError):
    """Neither a base URL nor a key names an endpoint: said before any work starts, never a silent default."""


def make_client(base_url: str | None = None, api_key: str | None = None, timeout: float = 600.0):
    """An OpenAI-compatible client for the endpoint the configuration or the environment names: a base URL
    (a local server needs no key), or a key alone for the public API. With neither, no public API is
    called with a dummy key: :class:`EndpointNotConfigured` says which variables to set."""
    from openai import OpenAI

    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    api_key = api_key or os.environ.get("OPENAI_API_KEY")
    if not base_url and not api_key:
        raise EndpointNotConfigured("no model endpoint: set OPENAI_BASE_URL (an OpenAI-compatible server) and/or "
                                    "OPENAI_API_KEY, or pass -o base_url=... (and -o api_key_env=NAME for a key "
                                    "in another variable)")
    return OpenAI(base_url=base_url, api_key=api_key or "unused", max_retries=0, timeout=timeout)


def echoed(arguments: str | None) -> str:
    """A call's arguments as sent back in the history: malformed or truncated JSON (a reply cut at
    max_tokens) becomes ``{}``, since a server that parses the history fails on it (measured: llama-server
    answers HTTP 500, which would read as an endpoint fault); the model reads the raw text in the tool's
    error, and the trajectory keeps it as the model wrote it."""
    try:
        return arguments if isinstance(json.loads(arguments or "{}"), dict) else "{}"
    except json.JSONDecodeError:
        return "{}"


def retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait (Retry-After as seconds or an HTTP date)."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) if when else None


def chat(client, *, remaining: Callable[[], float], on_retry: Callable[[Attempt], None] | None = None,
         max_attempts: int = MAX_ATTEMPTS, call_timeout: float | None = None,
         sleep: Callable[[float], None] = time.sleep, **request: Any):
    """``client.chat.completions.create(**request)`` with bounded retries; ``remaining()`` is the time to
    the caller's deadline (no attempt or wait goes past it), ``call_timeout`` bounds each attempt."""
    import openai

    retryable = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                 openai.InternalServerError)
    last: Exception | None = None
    for attempt in range(1, max_attempts + 1):
        left = remaining()
        if left <= 0:
            raise TimeoutError("the session deadline passed while calling the model")
        try:
            return client.chat.completions.create(timeout=min(left, call_timeout or left), **request)
        except openai.APIStatusError as exc:
            if not isinstance(exc, retryable) and exc.status_code < 500:
                if exc.status_code in (400, 413, 422):
                    raise AgentRequestError(f"the endpoint rejected the request: {exc.status_code} {exc}") from None
                raise ModelEndpointError(f"model endpoint error {exc.status_code}: {exc}") from None
            last = exc
        except retryable as exc:
            last = exc
        status = getattr(last, "status_code", None)
        wait = retry_after(last)
        delay = wait if wait is not None else min(MAX_DELAY_SEC, BASE_DELAY_SEC * 2 ** (attempt - 1))
        info = Attempt(attempt, type(last).__name__, status, round(delay, 3))
        log.warning("model call failed (%s, status %s); attempt %d/%d, waiting %.1f s",
                    info.error, status, attempt, max_attempts, delay)
        if on_retry:
            on_retry(info)
        if attempt == max_attempts:
            break
        if delay >= remaining():
            raise TimeoutError("the session deadline would pass while waiting to retry the model call")
        sleep(delay)
    where = getattr(client, "base_url", None)
    raise ModelEndpointError(f"model endpoint {where} failed {max_attempts} times; last: {type(last).__name__}: "
                             f"{last}")
