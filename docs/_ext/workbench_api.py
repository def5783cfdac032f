"""The ``{workbench-api}`` directive: one autodoc entry per name of ``workbench.__all__``.

``workbench/__init__.py`` exports its names lazily (PEP 562 ``__getattr__``), so ``automodule :members:``
sees none of them; this directive reads ``__all__`` and asks autodoc for each name by its public path
(``workbench.run_trial``), which the lazy ``__getattr__`` resolves. A name added to ``__all__`` appears
on the API page without editing it.
"""

from __future__ import annotations

import inspect

from sphinx.util.docutils import SphinxDirective


def _entry(name: str) -> str:
    """The autodoc directive (reStructuredText) that documents ``workbench.<name>``, by what it is."""
    import workbench

    obj = getattr(workbench, name)
    if inspect.isclass(obj):
        return f".. autoclass:: workbench.{name}\n   :members:\n"
    if callable(obj):
        return f".. autofunction:: workbench.{name}\n"
    return f".. autodata:: workbench.{name}\n   :annotation: = {obj!r}\n"


class WorkbenchApi(SphinxDirective):
    """Expands to the API reference, in ``__all__``'s order."""

    def run(self):
        import workbench

        # autodoc writes reStructuredText: on a Markdown page it must sit in an eval-rst block
        rst = "\n".join(_entry(name) for name in workbench.__all__)
        return self.parse_text_to_nodes(f"```{{eval-rst}}\n{rst}```\n")


def setup(app):
    app.add_directive("workbench-api", WorkbenchApi)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
