"""Reading what a scientific program wrote, not what it echoed: the parsers every task check shares.

A program's log echoes text the submission controls (an input file's name, a prefix, a title, a comment),
so a pattern matched anywhere in it, or its *last* match, can read the submission's text as the program's
own. These helpers read the program's own record instead:

- :func:`first_match`: the first line-anchored occurrence of a pattern (a program prints its settings
  once, in its header, before anything it echoes from a later stage), or ``None``;
- :func:`plain_name`: refuses names that could carry text into a log (the task contract's rule for
  prefixes, titles and file names);
- :func:`pwscf_xml`: Quantum ESPRESSO pw.x's XML data file (``<outdir>/<prefix>.xml`` or
  ``<prefix>.save/data-file-schema.xml``), the structured record pw.x writes itself.

Stdlib only: task checks import it in the reader (``from workbench.parsers import ...``) and spot
recomputations in the task's own environment, where the workbench places this one file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")


def first_match(pattern: str | re.Pattern[str], text: str, *, group: int | str = 1,
                flags: int = re.M) -> str | None:
    """The first occurrence of ``pattern`` in ``text`` (``group`` of it), or ``None``.

    Args:
        pattern: a regular expression; anchor it (``^\\s*...``) to the line the program prints, so text
            echoed inside another line cannot match.
        text: the program's output.
        group: which group to return.
        flags: ``re`` flags for a pattern given as a string (multi-line by default, so ``^`` anchors lines).
    """
    rx = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, flags)
    m = rx.search(text)
    return None if m is None else m.group(group)


def first_number(pattern: str | re.Pattern[str], text: str, *, group: int | str = 1) -> float | None:
    """:func:`first_match` as a float (``None`` when absent or not a number)."""
    s = first_match(pattern, text, group=group)
    try:
        return None if s is None else float(s)
    except ValueError:
        return None


def plain_name(name: str) -> bool:
    """Whether ``name`` is a plain identifier (letters, digits, ``_ . + -``, at most 64 characters):
    what a task contract may require of every prefix, title or file name a program echoes."""
    return bool(PLAIN_NAME.match(name))


# --- Quantum ESPRESSO ------------------------------------------------------------------------------

def _float(node: ET.Element | None) -> float | None:
    try:
        return None if node is None or node.text is None else float(node.text.split()[0])
    except ValueError:
        return None


def pwscf_xml(path: str | Path, *, max_bytes: int = 50 << 20) -> dict[str, Any]:
    """What pw.x recorded of one run in its XML data file (energies in Ry, lengths in bohr).

    Returns ``{"program", "version", "functional", "ecutwfc", "ecutrho", "nks", "alat", "ibrav", "nat",
    "species", "etot", "converged", "scf_iterations", "cell"}``; a key pw.x did not write is ``None``.
    The schema stores energies in hartree; they are converted to Ry, pw.x's unit in its log.

    Args:
        path: the XML file pw.x wrote.
        max_bytes: a larger file is refused (``ValueError``) rather than parsed.
    """
    p = Path(path)
    if p.stat().st_size > max_bytes:
        raise ValueError(f"{p.name}: larger than {max_bytes} bytes")
    root = ET.fromstring(p.read_bytes())
    # namespaced root (qes:espresso); children are not namespaced
    info = root.find("general_info/creator")
    out = root.find("output")
    inp = root.find("input")
    ha_to_ry = 2.0

    def ry(node):
        v = _float(node)
        return None if v is None else v * ha_to_ry

    cell = out.find("atomic_structure/cell") if out is not None else None
    struct = out.find("atomic_structure") if out is not None else None
    species = [s.get("name") for s in (out.findall("atomic_species/species") if out is not None else [])]
    conv = out.find("convergence_info/scf_conv") if out is not None else None
    return {
        "program": info.get("NAME") if info is not None else None,
        "version": info.get("VERSION") if info is not None else None,
        "functional": (out.findtext("dft/functional") if out is not None else None)
        or (inp.findtext("dft/functional") if inp is not None else None),
        "ecutwfc": ry(out.find("basis_set/ecutwfc")) if out is not None else None,
        "ecutrho": ry(out.find("basis_set/ecutrho")) if out is not None else None,
        "nks": int(out.findtext("band_structure/nks")) if out is not None and out.findtext("band_structure/nks")
        else None,
        "alat": float(struct.get("alat")) if struct is not None and struct.get("alat") else None,
        "ibrav": int(struct.get("bravais_index")) if struct is not None and struct.get("bravais_index") else None,
        "nat": int(struct.get("nat")) if struct is not None and struct.get("nat") else None,
        "species": species,
        "etot": ry(out.find("total_energy/etot")) if out is not None else None,
        "converged": (conv.findtext("convergence_achieved") or "").strip().lower() == "true"
        if conv is not None else None,
        "scf_iterations": int(conv.findtext("n_scf_steps")) if conv is not None and conv.findtext("n_scf_steps")
        else None,
        "cell": [[float(x) for x in (cell.findtext(a) or "").split()] for a in ("a1", "a2", "a3")]
        if cell is not None else None,
    }
