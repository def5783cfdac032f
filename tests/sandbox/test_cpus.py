"""Exclusive cores (workbench.sandbox.cpus), and the one exception: a thread working for an owner that waits on
it (the scoring service replaying for a CLI agent blocked on its HTTP call) borrows that owner's cores."""

from __future__ import annotations

import os
import threading

from workbench.sandbox.cpus import borrowing, reserve_cpus


def test_a_thread_working_for_a_waiting_owner_runs_on_its_cores_and_no_one_else_does(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CPU_LOCKS", str(tmp_path))  # this test's own locks, not the machine's
    every = sorted(os.sched_getaffinity(0))
    got: dict[str, list[int] | None] = {}
    with reserve_cpus(len(every), owner="session-a") as held:  # the session holds every core, and waits
        def service():
            with borrowing("session-a") as lent:
                got["lent"] = lent
                with reserve_cpus(1) as cores:  # the replay's sandbox: at once, on the owner's core
                    got["replay"] = cores

        t = threading.Thread(target=service)
        t.start()
        t.join(timeout=5)
        assert not t.is_alive() and got == {"lent": held, "replay": held[:1]}

        def stranger():
            with borrowing("session-b") as lent:  # an owner that holds nothing lends nothing
                got["stranger"] = lent
                with reserve_cpus(1) as cores:
                    got["stranger_cores"] = cores

        t = threading.Thread(target=stranger, daemon=True)
        t.start()
        t.join(timeout=1)
        assert t.is_alive() and got["stranger"] is None  # it queues for a free core like any sandbox
    t.join(timeout=5)
    assert got["stranger_cores"] and not t.is_alive()  # and gets one once the session released them
    with borrowing("session-a") as lent:  # released: nothing left to borrow
        assert lent is None
