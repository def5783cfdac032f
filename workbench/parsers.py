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

QES_NS = "http://www.quantum-espresso.org/ns/qes/qes-1.0"


def _float(node: ET.Element | None) -> float | None:
    try:
        return None if node is None or node.text is None else float(node.text.split()[0])
    except (ValueError, IndexError):
        return None


def _int(text: str | None) -> int | None:
    try:
        return None if text is None else int(text.strip())
    except ValueError:
        return None


def _one(parent: ET.Element | None, path: str) -> ET.Element | None:
    """The element at ``path`` under ``parent``; ``None`` when absent; ``ValueError`` when repeated (pw.x
    writes each of the elements read here once: a second one is not pw.x's record)."""
    if parent is None:
        return None
    found = parent.findall(path)
    if len(found) > 1:
        raise ValueError(f"{len(found)} <{path}> elements (pw.x writes one)")
    return found[0] if found else None


def pwscf_xml(path: str | Path, *, max_bytes: int = 50 << 20) -> dict[str, Any]:
    """What pw.x recorded of one run in its XML data file (energies in Ry, lengths in bohr).

    pw.x (QE 6.x/7.x, schema ``qes-1.0``) writes ``<outdir>/<prefix>.xml`` and
    ``<outdir>/<prefix>.save/data-file-schema.xml`` itself, at the end of a run; every text it copies from
    the input (title, prefix, directories, file names) is escaped (``&lt;`` ...), so submitted text cannot
    become elements. Everything returned is read from the ``<output>`` section (what the run used), except
    ``prefix``, ``title`` and ``k_mesh`` where the output lacks it.

    Returns a dict; a key pw.x did not write is ``None``:

    - ``program``, ``version``: ``"PWSCF"``, e.g. ``"6.7MaX"``;
    - ``functional``: the output's ``dft/functional`` (``"PZ"`` for Perdew-Zunger LDA, ``"PBE"``, ...);
    - ``ecutwfc``, ``ecutrho``: Ry; ``nks``: irreducible k-points; ``k_mesh``: the Monkhorst-Pack
      ``[nk1, nk2, nk3, k1, k2, k3]`` (``None`` for an explicit list);
    - ``alat`` (bohr), ``ibrav``, ``nat``, ``cell`` (3 lattice vectors, bohr), ``species`` (names),
      ``pseudos`` ({species: pseudopotential file}), ``pseudo_dir``;
    - ``etot``: the total energy (Ry); ``converged``, ``scf_iterations``: the SCF's outcome;
    - ``cpu_sec``: the CPU time pw.x reports for the run; ``status``: its exit status (0: completed);
    - ``prefix``, ``title``: the input's (submission-controlled) strings, for a contract that restricts them.

    The schema stores energies in hartree; they are converted to Ry, pw.x's unit in its log.

    Args:
        path: the XML file pw.x wrote.
        max_bytes: a larger file is refused (``ValueError``) rather than parsed.

    Raises:
        ValueError: the file is larger than ``max_bytes``, not well-formed XML, has a DOCTYPE, is not a
            ``qes:espresso`` document, or repeats an element pw.x writes once.
    """
    p = Path(path)
    if p.stat().st_size > max_bytes:
        raise ValueError(f"{p.name}: larger than {max_bytes} bytes")
    data = p.read_bytes()
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:  # pw.x never writes one; entities could expand or hide text
        raise ValueError(f"{p.name}: has a DOCTYPE or entity declaration, which pw.x never writes")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"{p.name}: not well-formed XML ({exc})") from exc
    if root.tag != f"{{{QES_NS}}}espresso":
        raise ValueError(f"{p.name}: root element {root.tag!r} is not qes:espresso")
    # namespaced root (qes:espresso); its children are not namespaced
    info = _one(root, "general_info/creator")
    inp = _one(root, "input")
    out = _one(root, "output")
    ha_to_ry = 2.0

    def ry(node):
        v = _float(node)
        return None if v is None else v * ha_to_ry

    struct = _one(out, "atomic_structure")
    cell = _one(struct, "cell")
    species_node = _one(out, "atomic_species")
    species = species_node.findall("species") if species_node is not None else []
    conv = _one(out, "convergence_info/scf_conv")
    mp = _one(out, "band_structure/starting_k_points/monkhorst_pack")
    if mp is None:
        mp = _one(inp, "k_points_IBZ/monkhorst_pack")
    k_mesh = [_int(mp.get(a)) for a in ("nk1", "nk2", "nk3", "k1", "k2", "k3")] if mp is not None else None
    total_cpu = _one(root, "timing_info/total")
    functional = _one(out, "dft/functional")
    if functional is None:
        functional = _one(inp, "dft/functional")
    prefix, title = _one(inp, "control_variables/prefix"), _one(inp, "control_variables/title")

    def attr(node, name, conv=float):
        try:
            return None if node is None or node.get(name) is None else conv(node.get(name))
        except ValueError:
            return None

    return {
        "program": info.get("NAME") if info is not None else None,
        "version": info.get("VERSION") if info is not None else None,
        "functional": (functional.text or "").strip() or None if functional is not None else None,
        "ecutwfc": ry(_one(out, "basis_set/ecutwfc")),
        "ecutrho": ry(_one(out, "basis_set/ecutrho")),
        "nks": _int(_one(out, "band_structure/nks").text) if _one(out, "band_structure/nks") is not None else None,
        "k_mesh": None if k_mesh is None or None in k_mesh else k_mesh,
        "alat": attr(struct, "alat"),
        "ibrav": attr(struct, "bravais_index", int),
        "nat": attr(struct, "nat", int),
        "species": [s.get("name") for s in species],
        "pseudos": {s.get("name"): (s.findtext("pseudo_file") or "").strip() for s in species},
        "pseudo_dir": species_node.get("pseudo_dir") if species_node is not None else None,
        "etot": ry(_one(out, "total_energy/etot")),
        "converged": (conv.findtext("convergence_achieved") or "").strip().lower() == "true"
        if conv is not None else None,
        "scf_iterations": _int(conv.findtext("n_scf_steps")) if conv is not None else None,
        "cell": [[float(x) for x in (cell.findtext(a) or "").split()] for a in ("a1", "a2", "a3")]
        if cell is not None else None,
        "cpu_sec": _float(_one(total_cpu, "cpu")),
        "status": _int(root.findtext("status")),
        "prefix": prefix.text or "" if prefix is not None else None,
        "title": title.text or "" if title is not None else None,
    }
