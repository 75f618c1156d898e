"""Entity lists as people save them (pelt.tasks.entities.data): every form gives the same names, or one
line saying what to save instead."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from pelt.tasks.entities.data import listed_entities

NAMES = ["Zürich", "Q42", "Marie Curie"]
EXPECTED = [("Zürich", None), ("Q42", "Q42"), ("Marie Curie", None)]


@pytest.mark.parametrize(
    "saved",
    [
        pytest.param("\n".join(NAMES).encode("utf-8"), id="plain UTF-8"),
        pytest.param(codecs.BOM_UTF8 + "\r\n".join(NAMES).encode("utf-8") + b"\r\n", id="Notepad UTF-8, BOM, CRLF"),
        pytest.param(codecs.BOM_UTF16_LE + "\r\n".join(NAMES).encode("utf-16-le"), id="UTF-16 LE, BOM"),
        pytest.param(codecs.BOM_UTF16_BE + "\n".join(NAMES).encode("utf-16-be"), id="UTF-16 BE, BOM"),
        pytest.param("\r".join(f"  {n} \t" for n in NAMES).encode("utf-8"), id="CR line ends, spaces around"),
    ],
)
def test_a_plain_list_reads_the_same_however_it_was_saved(tmp_path: Path, saved: bytes) -> None:
    path = tmp_path / "mine.txt"
    path.write_bytes(saved)
    assert list(listed_entities(str(path))) == EXPECTED


@pytest.mark.parametrize(
    "saved",
    [
        pytest.param(
            codecs.BOM_UTF8 + b"name,qid\r\nZ\xc3\xbcrich,\r\nQ42,\r\nMarie Curie,Q7186\r\n", id="Excel CSV UTF-8"
        ),
        pytest.param("name\tqid\r\nZürich\t\r\nQ42\t\r\nMarie Curie\tQ7186\r\n".encode("utf-16"), id="Excel Unicode"),
        pytest.param(codecs.BOM_UTF8 + "name ; qid \nZürich;\nQ42;\nMarie Curie ;Q7186\n".encode(), id="semicolons"),
    ],
)
def test_a_csv_list_finds_its_columns_however_it_was_saved(tmp_path: Path, saved: bytes) -> None:
    """The header's first column keeps no byte-order mark, names lose their spaces, and the separator
    is the one that gives the columns asked for (Excel writes semicolons where a comma is the decimal mark)."""
    path = tmp_path / "mine.csv"
    path.write_bytes(saved)
    assert list(listed_entities(str(path), column="name", qid_column="qid")) == [
        ("Zürich", None),
        ("Q42", "Q42"),
        ("Marie Curie", "Q7186"),
    ]


def test_a_list_in_another_encoding_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("Paris\nZürich\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.txt:2: not UTF-8 text \(invalid start byte\); save the list"):
        list(listed_entities(str(path)))
    path.write_bytes("Paris\nZürich\n".encode("utf-16-le"))  # no byte-order mark
    with pytest.raises(ValueError, match=r"latin1.txt: holds NUL bytes \(UTF-16 without a byte-order mark\?\)"):
        list(listed_entities(str(path)))
    path.write_bytes(codecs.BOM_UTF16_LE + b"P\x00\x00\xdc")  # a lone low surrogate
    with pytest.raises(ValueError, match=r"latin1.txt:1: not UTF-16 text"):
        list(listed_entities(str(path)))


def test_the_end_of_a_run_says_which_listed_entities_were_found(tmp_path):
    """The terminal's last lines for a list: found of listed, and each miss with its closest names."""
    from pelt.tasks.entities.data import found_lines

    path = tmp_path / "mine.txt"
    path.write_text("\ufeffMarie Curie\r\nMarie Curei\r\nQ42\r\nNobody at all\r\n", encoding="utf-8")
    not_found = {"Marie Curei": ["Marie Curie", "Pierre Curie", "Curie", "Curium"], "Nobody at all": []}
    assert found_lines("entities", {}, [str(path)], not_found) == [
        "tasks.entities: 2 of 4 entities found",
        "  not found: 'Marie Curei' (closest: 'Marie Curie', 'Pierre Curie', 'Curie')",
        "  not found: 'Nobody at all' (closest: none close)",
    ]
