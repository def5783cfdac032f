"""The reviewer's kernels under Voila: a bound on how many live at once.

Voila starts a kernel (~165 MB) for every visit of the review page. A closed tab asks Voila to shut its
kernel down, and kernels nobody is connected to are culled when idle (``workbench review serve`` sets
both timeouts), but a page reloaded in a loop, or tabs that never say goodbye, would still pile kernels up
faster than culling frees them. So at most ``max_kernels`` live: a visit beyond the bound first shuts down
the kernel that is needed least (no page connected before one that has, then the longest idle).
"""

from __future__ import annotations

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from traitlets import Integer

MAX_KERNELS = 6


class BoundedKernelManager(AsyncMappingKernelManager):
    """A mapping kernel manager that keeps at most ``max_kernels`` kernels alive."""

    max_kernels = Integer(MAX_KERNELS, config=True, help="The most kernels alive at once (a new visit beyond it "
                                                         "shuts down the kernel needed least).")

    def _least_needed(self) -> str:
        def need(kid: str) -> tuple[bool, object]:
            return self._kernel_connections.get(kid, 0) > 0, self.get_kernel(kid).last_activity

        return min(self.list_kernel_ids(), key=need)

    async def start_kernel(self, *, kernel_id: str | None = None, path=None, **kwargs) -> str:  # type: ignore[override]
        if kernel_id is None or kernel_id not in self:
            while len(self.list_kernel_ids()) >= max(self.max_kernels, 1):
                victim = self._least_needed()
                self.log.info("workbench: %d kernels alive (the bound); shutting down %s, the one needed least",
                              len(self.list_kernel_ids()), victim)
                await self.shutdown_kernel(victim)
        return await super().start_kernel(kernel_id=kernel_id, path=path, **kwargs)
