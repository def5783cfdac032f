"""Execution receipts: what a replay ran, as the kernel saw it (:mod:`.model` is ``replay/receipts.json``,
:mod:`.build` makes it from the recorder's :mod:`.raw` record)."""

from .build import build, package_of
from .model import SCHEMA, UNAVAILABLE, CodeTime, Image, ProcessReceipt, Receipts, Write, program_matches, unavailable
from .raw import generation

__all__ = ["SCHEMA", "UNAVAILABLE", "CodeTime", "Image", "ProcessReceipt", "Receipts", "Write", "build", "generation",
           "package_of", "program_matches", "unavailable"]
