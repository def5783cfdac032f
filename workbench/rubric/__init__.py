"""Rubric trees: phases, exact effective weights, gate scopes."""

from .model import EvidenceInput, RubricNode
from .phases import PHASES, phase_of
from .tree import FULL_THRESHOLD, Leaf, Rubric, exact, graded_root_score, is_full, load_rubric, parse_rubric

__all__ = [
    "PHASES", "FULL_THRESHOLD", "EvidenceInput", "Leaf", "Rubric", "RubricNode", "exact",
    "graded_root_score", "is_full", "load_rubric", "parse_rubric", "phase_of",
]
