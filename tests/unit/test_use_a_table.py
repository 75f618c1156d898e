"""examples/use_a_table.py's inputs as ``pelt table`` reads them (issue 55, item 4): ``--entity`` through the
shared resolver (id, QID, alias, ``--ignore-case``), a miss with the closest names, and every wrong input
(model path, table path, values out of range) one line, no traceback. The predictions themselves are
checked end to end in tests/workflow/test_example.py."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from conftest import REPO

from pelt.table import write_table

META = {
    "model": "m",
    "revision": "local",
    "model_type": "roberta",
    "hidden_size": 3,
    "representation": "r",
    "max_seq_len": 8,
    "norm": 1.0,
}
TEXT = "Heireith was born in [MASK] ."


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("use_a_table", REPO / "examples" / "use_a_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def table(tmp_path):
    sums = np.ones((2, 3))
    write_table(
        tmp_path / "table.parquet",
        ["Heireith", "Sinerkven"],
        sums,
        [6, 1],
        [6, 1],
        META,
        qids=["Q990100298", None],
        aliases=[["Heireith of Sinerkven"], []],
    )
    return tmp_path / "table.parquet"


def _run(example, capsys, *arguments: str) -> tuple[int, str]:
    status = example.main(["--text", TEXT, "--mention", "Heireith", *arguments])
    return status, capsys.readouterr().err


def test_an_entity_not_found_names_the_closest_in_one_line(example, table, tmp_path, capsys):
    status, err = _run(
        example, capsys, "--model", str(tmp_path / "model"), "--table", str(table), "--entity", "Heireit"
    )
    assert status == 1 and err == f"error: not in {table}: 'Heireit' found no entity (closest: 'Heireith')\n"


@pytest.mark.parametrize("entity", ["Q990100298", "Heireith of Sinerkven", "heireith"])
def test_a_qid_an_alias_or_a_name_is_found_and_a_mistyped_model_is_one_line(example, table, tmp_path, capsys, entity):
    """The entity is found (the run gets as far as the model), and the model's wrong path is one line."""
    model = str(tmp_path / "resuls" / "models" / "demo")
    status, err = _run(example, capsys, "--model", model, "--table", str(table), "--entity", entity, "--ignore-case")
    assert status == 1 and err.startswith(f"error: cannot load masked LM {model!r}") and err.count("\n") == 1


def test_a_table_path_that_is_not_there_is_one_line(example, tmp_path, capsys):
    status, err = _run(example, capsys, "--model", "m", "--table", str(tmp_path / "nowhere"), "--entity", "x")
    assert status == 1 and err.startswith(f"error: entity table {tmp_path / 'nowhere'} does not exist: ")
    assert err.count("\n") == 1


@pytest.mark.parametrize(("option", "value"), [("--norm", "-1"), ("--norm", "nan"), ("--top-k", "0")])
def test_values_out_of_range_are_one_line(example, table, capsys, option, value):
    with pytest.raises(SystemExit) as exit_:
        _run(example, capsys, "--model", "m", "--table", str(table), "--entity", "Heireith", option, value)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].split(": error: ")[1].startswith(f"argument {option}: ")


@pytest.mark.parametrize(
    ("device", "says"),
    [
        ("gpu", "device 'gpu' cannot be used here (Expected one of cpu, cuda"),
        ("cuda:0", "device 'cuda:0' cannot be used here ("),
    ],
)
def test_a_device_that_is_not_there_is_one_line(example, table, capsys, device, says):
    """A misspelt device, or CUDA on a machine without it (CI's), is refused in one line naming it,
    before the model loads; on a machine with CUDA the second case is a real device and loads."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        device = "cuda:99"
        says = "device 'cuda:99' cannot be used here ("
    status, err = _run(
        example, capsys, "--model", "m", "--table", str(table), "--entity", "Heireith", "--device", device
    )
    assert status == 1 and err.startswith(f"error: {says}") and err.count("\n") == 1, err
