"""Spare kernels, started before a notebook asks, and the papermill engine that runs notebooks on them.

Forking a kernel from the template (:mod:`workbench.jupyter.warm`) still leaves ~0.15 s of ipykernel
start-up and ~0.1 s of shutdown per notebook. The pool pays both off the notebook's path: it keeps
``spares`` kernels started ahead (each forked, initialised and answering), hands one to each notebook
(papermill drives it through nbclient as a provided kernel manager), and shuts it down in the
background afterwards. A kernel serves exactly one notebook.

A spare is started with the environment and working directory of the moment it was ordered; a notebook
that asks under others (a test changed the environment, a caller moved) gets a kernel started for them,
and stale spares are shut down. Kernel managers live on the pool's own event loop thread, so papermill,
in whatever thread it runs (a Dask worker runs trials in threads), only ever creates its client.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import threading
from typing import Any

from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, papermill_engines
from papermill.log import logger
from papermill.utils import merge_kwargs, remove_args

from .warm import START_TIMEOUT_SEC, WarmKernelManager

log = logging.getLogger(__name__)

ENGINE_NAME = "workbench-warm"


def spares() -> int:
    """Kernels kept started ahead per process: ``WORKBENCH_WARM_KERNELS`` (default 1; 0 = cold kernels)."""
    raw = os.environ.get("WORKBENCH_WARM_KERNELS", "1")
    try:
        return max(0, int(raw))
    except ValueError:
        return 1


class KernelPool:
    def __init__(self, spares: int = 1):
        self.spares = spares
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="workbench-kernel-pool", daemon=True)
        self.thread.start()
        self.lock = threading.Lock()
        self.ready: list[tuple[tuple, concurrent.futures.Future]] = []

    def _order(self, kernel_name: str) -> tuple[tuple, concurrent.futures.Future]:
        """Start a kernel for this moment's environment and directory (read here, in the caller's thread:
        the kernelspec is found through JUPYTER_PATH, which the caller sets only around its notebook)."""
        env, cwd = dict(os.environ), os.getcwd()
        km = WarmKernelManager(kernel_name=kernel_name)
        km.kernel_spec  # noqa: B018 -- resolved now, under the caller's JUPYTER_PATH
        return _key(kernel_name, env, cwd), asyncio.run_coroutine_threadsafe(_start(km, env, cwd), self.loop)

    def take(self, kernel_name: str) -> WarmKernelManager:
        """A started kernel for this environment, used once; order its replacement."""
        key = _key(kernel_name, dict(os.environ), os.getcwd())
        with self.lock:
            mine = None
            for k, fut in self.ready:
                if k == key and mine is None:
                    mine = fut
                else:
                    fut.add_done_callback(self._retire_future)
            if mine is None:
                mine = self._order(kernel_name)[1]
            self.ready = [self._order(kernel_name) for _ in range(self.spares)]
        try:
            km = mine.result(START_TIMEOUT_SEC)
        except Exception as exc:  # a spare that failed to start: one more try, in the open
            log.warning("a spare kernel failed to start (%s); starting another", exc)
            km = self._order(kernel_name)[1].result(START_TIMEOUT_SEC)
        if km.provisioner is None or km.provisioner.process is None or km.provisioner.process.poll() is not None:
            self.retire(km)
            km = self._order(kernel_name)[1].result(START_TIMEOUT_SEC)
        return km

    def retire(self, km: WarmKernelManager) -> None:
        """Shut a used (or stale) kernel down in the background."""
        asyncio.run_coroutine_threadsafe(_shutdown(km), self.loop)

    def _retire_future(self, fut: concurrent.futures.Future) -> None:
        if not fut.cancelled() and fut.exception() is None:
            self.retire(fut.result())

    def close(self) -> None:
        """At exit: spares are killed (they never ran anything), kernels still shutting down get a few
        seconds to finish; whatever is left dies with the template, which dies with this pool's thread."""
        with self.lock:
            pending, self.ready = self.ready, []
        for _, fut in pending:
            try:
                km = fut.result(10)
                asyncio.run_coroutine_threadsafe(_shutdown(km, now=True), self.loop).result(10)
            except Exception:
                continue
        try:
            asyncio.run_coroutine_threadsafe(_drain(), self.loop).result(15)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            if not self.thread.is_alive():
                self.loop.close()


def _key(kernel_name: str, env: dict[str, str], cwd: str) -> tuple:
    return kernel_name, tuple(sorted(env.items())), cwd


# what nbclient passes an IPython kernel it starts (its ipython_hist_file): no history database on disk
KERNEL_ARGS = ["--HistoryManager.hist_file=:memory:"]


async def _start(km: WarmKernelManager, env: dict[str, str], cwd: str) -> WarmKernelManager:
    """Started and answering: the kernel's own initialisation is paid here too, not by the notebook."""
    await km.start_kernel(env=env, cwd=cwd, extra_arguments=KERNEL_ARGS)
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=START_TIMEOUT_SEC)
    finally:
        kc.stop_channels()
    return km


async def _shutdown(km: WarmKernelManager, now: bool = False) -> None:
    try:
        await km.shutdown_kernel(now=now)
    except Exception as exc:  # the kernel is gone either way; its template reaps it
        log.debug("kernel shutdown: %s", exc)


async def _drain(grace: float = 5.0) -> None:
    """Let the loop's other tasks (shutdowns) finish for ``grace`` seconds, then cancel what remains."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    if not tasks:
        return
    _, late = await asyncio.wait(tasks, timeout=grace)
    for task in late:
        task.cancel()
    await asyncio.gather(*late, return_exceptions=True)


_pool: KernelPool | None = None
_pool_lock = threading.Lock()


def pool() -> KernelPool:
    """This process's pool, started on first use and closed at exit."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = KernelPool(spares())
            atexit.register(_close_pool)
        return _pool


def _close_pool() -> None:
    global _pool
    if _pool is not None:
        _pool.close()
        _pool = None


class _OneKernelClient(PapermillNotebookClient):
    """papermill's client on a provided kernel: stops its channels after the notebook (nbclient leaves
    a provided kernel's client running) and gives the kernel back to be shut down."""

    def execute(self, **kwargs: Any):
        try:
            return super().execute(**kwargs)
        finally:
            if self.kc is not None:
                self.kc.stop_channels()
                self.kc = None
            pool().retire(self.km)


class WarmEngine(NBClientEngine):
    """papermill's nbclient engine, executing on a kernel from this process's pool."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None, stderr_file=None,
                                 start_timeout=60, execution_timeout=None, **kwargs):
        kwargs = remove_args(["input_path", "timeout", "startup_timeout"], **kwargs)
        final = merge_kwargs(kwargs, timeout=execution_timeout, startup_timeout=start_timeout,
                             kernel_name=kernel_name, log=logger, log_output=log_output,
                             stdout_file=stdout_file, stderr_file=stderr_file)
        return _OneKernelClient(nb_man, km=pool().take(kernel_name), **final).execute()


papermill_engines.register(ENGINE_NAME, WarmEngine)
