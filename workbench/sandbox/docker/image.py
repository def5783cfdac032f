"""Where a docker sandbox's image comes from: the task's ``environment/Dockerfile`` built by the local
engine, tagged by the digest of its build context, on a Debian base built without a registry
(``debian_base.sh``, cached as a tarball)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ...errors import WorkbenchError
from ...io import digest_of, tree_hashes
from ..base import SandboxSetupError

log = logging.getLogger(__name__)
BASE_IMAGE = "debian:bookworm-slim"
BASE_RECIPE = Path(__file__).with_name("debian_base.sh")  # no registry: the base is built from Debian


def connect():
    """The local engine (DOCKER_HOST et al.), or a one-line SandboxSetupError when none answers."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - docker is a dependency
        raise WorkbenchError("the docker sandbox needs the docker SDK (pip install docker)") from exc
    try:
        return docker.from_env()
    except docker.errors.DockerException as exc:
        raise SandboxSetupError(f"docker sandbox: no Docker engine reachable ({exc})") from None


def build_context(task_root: Path) -> dict[str, str]:
    """{path: sha256} of the build context the engine gets from ``environment/``: every file the docker SDK
    sends (all but what ``.dockerignore`` excludes), since any of them may be COPY'd into the image (PaperBenchX
    images copy the paper and the starter submission)."""
    from docker.utils.build import exclude_paths

    env = Path(task_root) / "environment"
    ignore = env / ".dockerignore"
    lines = [x.strip() for x in ignore.read_text(encoding="utf-8").splitlines()] if ignore.is_file() else []
    sent = exclude_paths(str(env), [x for x in lines if x and not x.startswith("#")], dockerfile="Dockerfile")
    return {k: v for k, v in tree_hashes(env).items() if k in sent}


def image_tag(task_root: Path) -> str:
    """``workbench/env:<digest16 of the build context>``: a changed file gives a new image, and a copied or
    renamed task with the same context uses the one already built (its ``workbench.task`` label says who built
    it)."""
    return f"workbench/env:{digest_of(build_context(task_root))[:16]}"


def ensure_base(client, ca_bundle: Path | None = None, say=None) -> None:
    """Build (or load from its cached tarball) the base image when the engine lacks it; ``ca_bundle`` adds
    certificates for HTTPS in builds behind a TLS-intercepting proxy."""
    import subprocess

    try:
        client.images.get(BASE_IMAGE)
        return
    except Exception:
        pass
    if say:
        say(f"building the base image {BASE_IMAGE} from Debian packages (no registry; ~90 s, cached after)")
    env = {**os.environ, **({"WORKBENCH_CA_BUNDLE": str(ca_bundle)} if ca_bundle else {})}
    proc = subprocess.run(["bash", str(BASE_RECIPE)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SandboxSetupError(f"docker sandbox: the base image {BASE_IMAGE} could not be built: {last}")
    if say and proc.stdout.strip():
        say(proc.stdout.strip())


def task_image(task, client=None, ca_bundle: Path | None = None, say=None) -> str:
    """The task's image, built from environment/Dockerfile when the engine does not have it yet (the base
    first, when the Dockerfile starts FROM it and the engine lacks it)."""
    client = client or connect()
    tag = image_tag(task.root)
    try:
        client.images.get(tag)
    except Exception:
        if not task.paths.dockerfile.is_file():
            raise WorkbenchError(f"{task.paths.dockerfile}: missing; the docker sandbox cannot build {task.id}"
                                 ) from None
        if f"FROM {BASE_IMAGE}" in task.paths.dockerfile.read_text(errors="replace"):
            ensure_base(client, ca_bundle, say)
        if say:
            say(f"building {tag} from {task.paths.dockerfile}")
        log.info("building %s from %s", tag, task.paths.dockerfile)
        import docker

        try:
            client.images.build(path=str(task.paths.environment), tag=tag, rm=True,
                                labels={"workbench.task": task.id})
        except (docker.errors.BuildError, docker.errors.APIError) as exc:  # the task's environment, not a bug
            reason = str(getattr(exc, "msg", None) or exc).strip().splitlines()[-1][:300]
            raise SandboxSetupError(f"docker sandbox: the image of {task.id} could not be built from "
                                    f"{task.paths.dockerfile}: {reason}") from None
    return tag
