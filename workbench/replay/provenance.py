"""replay/provenance.json: what a clean replay ran, under which limits, and what it froze (one model)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..version import __version__


class Provenance(BaseModel):
    """replay/provenance.json"""

    task: str
    task_digest: str | None = None  # the task package's content hash at replay time (which task this is)
    status: Literal["succeeded", "failed"]
    failure_reasons: list[str] = Field(default_factory=list)
    exit_code: int | None
    signal: int | None = None
    wall_sec: float
    timed_out: bool
    started_at: str
    finished_at: str
    command: list[str]
    limits: dict
    network: str
    sandbox: dict
    environment: dict
    removed_outputs: dict[str, int]
    source_hashes_before: dict[str, str]
    source_hashes_after: dict[str, str]
    sources_changed: list[str]
    sources_digest: str
    stray_files: list[str] = Field(default_factory=list)
    limit_exceeded: str | None = None  # why a limit stopped the replay (storage, files, memory)
    limit: str | None = None  # which: memory | storage | files | time
    peak_memory_mb: float | None = None  # resident peak of the whole replay (where a cgroup measured it)
    oom_killed: bool = False
    limit_mechanisms: dict[str, str] = Field(default_factory=dict)  # what enforced each limit (cgroup, rlimit, ...)
    hard_links_skipped: list[str] = Field(default_factory=list)  # submission files linked to outside files
    quarantined: list[str] = Field(default_factory=list)  # delivered files that are not sources: removed first
    # entries that are not frozen: special files, trees nested too deep or with too long paths ("path: why")
    refused_entries: list[str] = Field(default_factory=list)
    log_bytes_dropped: dict[str, int] = Field(default_factory=dict)  # output beyond the log cap
    leftover_processes_killed: int = 0
    queued_sec: float = 0.0
    cores: list[int] = Field(default_factory=list)
    # the GPUs it held (none unless the task asks): node, lock owner, and what NVML measured where it could
    gpus: list[dict] = Field(default_factory=list)
    logs: dict[str, str]
    evidence_manifest_digest: str
    receipts_digest: str | None = None  # of replay/receipts.json (what ran, recorded from outside)
    receipts_complete: bool = False
    # the second replay, with inputs drawn for it alone (secret/ in the evidence); None: the task varies none,
    # or the first replay failed
    secret_replay: dict | None = None
    # large high-entropy literals in the delivered sources (data shipped as code; workbench.replay.data_in_code)
    data_in_code: dict | None = None
    workbench_version: str = __version__
