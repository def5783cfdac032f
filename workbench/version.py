"""The workbench's version, in a module of its own so that any layer can stamp it on what it writes."""

__version__ = "0.1.0"
