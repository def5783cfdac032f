"""workbench: replay-grounded evaluation of AI agents that reproduce published science."""

__version__ = "0.1.0"
