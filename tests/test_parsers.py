"""workbench.parsers on real program output (pw.x 6.7 runs checked in under tests/fixtures/pwscf/)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from workbench.parsers import first_match, first_number, plain_name, pwscf_xml

FIX = Path(__file__).parent / "fixtures" / "pwscf"


def _unzip(name: str, tmp_path: Path) -> Path:
    out = tmp_path / name.removesuffix(".gz")
    out.write_bytes(gzip.decompress((FIX / name).read_bytes()))
    return out


def test_pwscf_xml_reads_a_real_data_file(tmp_path):
    d = pwscf_xml(_unzip("si-lda.xml.gz", tmp_path))
    assert d["program"] == "PWSCF" and d["version"] == "6.7MaX"
    assert d["functional"] == "PZ"
    assert d["etot"] == pytest.approx(-15.61435403, abs=1e-8)  # the log's "!    total energy" (Ry)
    assert d["ecutwfc"] == 12.0 and d["ecutrho"] == 48.0
    assert d["nks"] == 3 and d["k_mesh"] == [2, 2, 2, 0, 0, 0]
    assert d["alat"] == 10.2 and d["ibrav"] == 2 and d["nat"] == 2
    assert d["species"] == ["Si"] and d["pseudos"] == {"Si": "Si.pz-vbc.UPF"}
    assert d["converged"] is True and d["scf_iterations"] == 7 and d["status"] == 0
    assert d["cell"][0] == [-5.1, 0.0, 5.1]
    assert 0 < d["cpu_sec"] < 5
    assert d["prefix"] == "si" and d["title"] == ""


def test_pwscf_xml_keeps_submitted_markup_as_text(tmp_path):
    """pw.x escapes what it copies from the input: a title full of markup stays a string."""
    d = pwscf_xml(_unzip("si-title-markup.xml.gz", tmp_path))
    assert d["title"] == 'a</title><b>&x"<!--'
    assert d["etot"] == pytest.approx(-15.61435403, abs=1e-8) and d["functional"] == "PZ"


def test_injected_prefix_fools_a_last_match_but_not_the_xml_or_an_anchored_first_match(tmp_path):
    """A PBE run at 12 Ry, 3 k-points whose prefix spells converged LDA settings; pw.x echoes the prefix
    at the end of its log. The last regex match reads the prefix; the data file and anchored patterns do not."""
    log = _unzip("si-pbe-injected.out.gz", tmp_path).read_text()
    xc, ecut, nk = r"Exchange-correlation\s*=\s*(.+)", r"kinetic-energy cutoff\s*=\s*([\d.]+)\s*Ry", \
        r"number of k points\s*=\s*(\d+)"
    assert re.findall(xc, log)[-1].startswith("SLA PZ") and re.findall(ecut, log)[-1] == "30.0" \
        and re.findall(nk, log)[-1] == "29"  # the old parser's reading
    assert first_match(r"^\s*Exchange-correlation\s*=\s*(.+)", log).split() == ["SLA", "PW", "PBE", "PBE"]
    assert first_number(r"^\s*kinetic-energy cutoff\s*=\s*([\d.]+)\s*Ry", log) == 12.0
    assert first_number(r"^\s*number of k points\s*=\s*(\d+)", log) == 3
    d = pwscf_xml(_unzip("si-pbe-injected.xml.gz", tmp_path))
    assert (d["functional"], d["ecutwfc"], d["nks"]) == ("PBE", 12.0, 3)
    assert not plain_name(d["prefix"])


def test_first_match_is_first_and_anchored():
    text = "Reading input from number of k points= 99.in\n     number of k points=     3\n" \
           "Writing number of k points= 29\n"
    assert first_number(r"^\s*number of k points\s*=\s*(\d+)", text) == 3
    assert first_number(r"number of k points\s*=\s*(\d+)", text) == 99  # unanchored: the echoed name
    assert first_match(r"^absent (\d+)", text) is None
    assert first_number(r"^(Reading)", text) is None  # not a number


@pytest.mark.parametrize("name,ok", [("ev0", True), ("si_10.2000", True), ("k8+shift", True), ("", False),
                                     ("a b", False), ("x/../y", False), ("-x", False), ("a\nb", False),
                                     ("Exchange-correlation= SLA PZ", False), ("x" * 65, False)])
def test_plain_name(name, ok):
    assert plain_name(name) is ok


def _lda_text(tmp_path) -> str:
    return _unzip("si-lda.xml.gz", tmp_path).read_text()


def test_pwscf_xml_refuses_what_pw_x_never_writes(tmp_path):
    text = _lda_text(tmp_path)
    bad = {
        "doctype": text.replace("<qes:espresso", '<!DOCTYPE x [<!ENTITY e "1">]>\n<qes:espresso', 1),
        "truncated": text[: len(text) // 2],
        "two-outputs": text.replace("<output>", "<output><total_energy><etot>-9</etot></total_energy></output>"
                                    "<output>", 1),
        "two-energies": text.replace("<total_energy>", "<total_energy><etot>-9</etot>", 1),
        "other-root": text.replace("qes:espresso", "qes:other"),
    }
    for name, body in bad.items():
        p = tmp_path / f"{name}.xml"
        p.write_text(body)
        with pytest.raises(ValueError):
            pwscf_xml(p)
    p = tmp_path / "big.xml"
    p.write_text(text)
    with pytest.raises(ValueError, match="larger"):
        pwscf_xml(p, max_bytes=1000)


def test_pwscf_xml_missing_fields_are_none(tmp_path):
    text = _lda_text(tmp_path)
    text = re.sub(r"<output>.*</output>", "<output></output>", text, flags=re.S)
    p = tmp_path / "no-output.xml"
    p.write_text(text)
    d = pwscf_xml(p)
    assert d["etot"] is None and d["nks"] is None and d["alat"] is None and d["converged"] is None
    assert d["functional"] == "PZ" and d["k_mesh"] == [2, 2, 2, 0, 0, 0]  # from <input>
