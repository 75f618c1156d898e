"""The ``pelt table`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tomllib
from conftest import REPO

from pelt.cli import main
from pelt.table import EntityTable, write_table

META = {
    "model": "m",
    "revision": "local",
    "model_type": "bert",
    "hidden_size": 3,
    "representation": "r",
    "max_seq_len": 128,
    "norm": 10.0,
}


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "table.parquet"
    write_table(path, ["Paris", "Warsaw"], np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]]), [2, 1], [9, 5], META)
    return path


def test_info(table, capsys):
    assert main(["table", "info", str(table)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "entities: 2" in lines and "hidden_size: 3" in lines and "norm: 10.0" in lines and "model: m" in lines


@pytest.mark.parametrize("norm", ["-3", "0", "nan", "inf", "seven"])
def test_a_norm_out_of_range_is_one_line(table, capsys, norm):
    with pytest.raises(SystemExit) as exit_:
        main(["table", "lookup", str(table), "Paris", "--norm", norm])
    assert exit_.value.code == 2
    *usage, error = capsys.readouterr().err.strip().splitlines()
    assert error.startswith("pelt table lookup: error: argument --norm: ") and "Traceback" not in error
    assert usage[0].startswith("usage: ") and all(line.startswith(" ") for line in usage[1:])


def test_lookup_text_and_json(table, capsys):
    assert main(["table", "lookup", str(table), "Paris", "--norm", "5"]) == 0
    assert capsys.readouterr().out == "Paris\tn_sentences=2\tfrequency=9\t3 4 0\n"
    assert main(["table", "lookup", str(table), "Warsaw", "Paris", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["norm"] == 10.0 and [e["entity_id"] for e in out["entities"]] == ["Warsaw", "Paris"]
    assert out["entities"][0]["vector"] == [0.0, 0.0, 10.0] and out["entities"][1]["vector"] == pytest.approx([6, 8, 0])


def test_errors_exit_nonzero(table, tmp_path, capsys):
    assert main(["table", "lookup", str(table), "Paris", "Berlin", "Rome"]) == 1
    err = capsys.readouterr().err
    assert "'Berlin' found no entity (closest: none close); 'Rome' found no entity" in err and err.count("\n") == 1
    assert main(["table", "info", str(tmp_path / "missing.parquet")]) == 1
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["table"])


def test_merge(table, tmp_path, capsys):
    assert main(["table", "merge", str(tmp_path / "twice.parquet"), str(table), str(table)]) == 1
    err = capsys.readouterr().err.strip()
    assert (
        "\n" not in err
        and "2 entities are in more than one table ('Paris', 'Warsaw')" in err
        and "--sum-overlap" in err
    )
    assert not (tmp_path / "twice.parquet").exists()
    assert main(["table", "merge", str(tmp_path / "m.parquet"), str(table), str(table), "--sum-overlap"]) == 0
    assert "2 entities" in capsys.readouterr().out
    assert main(["table", "lookup", str(tmp_path / "m.parquet"), "Paris", "--norm", "5"]) == 0
    assert capsys.readouterr().out == "Paris\tn_sentences=4\tfrequency=9\t3 4 0\n"


def test_ids_lists_every_entity_and_finds_titles_qids_and_aliases(tmp_path, capsys):
    path = tmp_path / "ids.parquet"
    sums = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]])
    write_table(path, ["Paris", "Warsaw"], sums, [2, 1], [9, 5], META, qids=["Q90", None], aliases=[["Lutetia"], []])
    assert main(["table", "ids", str(path)]) == 0
    assert capsys.readouterr().out == "entity_id\tqid\taliases\nParis\tQ90\tLutetia\nWarsaw\t\t\n"
    assert main(["table", "ids", str(path), "Q90", "lutetia", "Warsaw", "--ignore-case"]) == 0
    assert capsys.readouterr().out == "name\tentity_id\tqid\nQ90\tParis\tQ90\nlutetia\tParis\tQ90\nWarsaw\tWarsaw\t\n"
    assert main(["table", "ids", str(path), "Lutetia", "Q90", "--by", "id,alias"]) == 1  # a QID only by qid
    captured = capsys.readouterr()
    assert captured.out == "name\tentity_id\tqid\nLutetia\tParis\tQ90\n"
    assert captured.err == f"error: not in {path} (by id,alias): 'Q90' found no entity (closest: none close)\n"
    assert main(["table", "ids", str(path), "Lutetiaa", "Warsw"]) == 1
    err = capsys.readouterr().err
    assert "'Lutetiaa' found no entity (closest: 'Paris')" in err  # by the alias, named by the id
    assert "'Warsw' found no entity (closest: 'Warsaw')" in err and err.count("\n") == 1


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out == f"pelt {version}\n"


def test_a_folder_is_a_table_path(table, tmp_path, capsys):
    assert main(["table", "info", str(tmp_path)]) == 0
    assert "entities: 2" in capsys.readouterr().out.splitlines()
    (tmp_path / "m").mkdir()
    assert main(["table", "merge", str(tmp_path / "m"), str(tmp_path), str(tmp_path), "--sum-overlap"]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'm' / 'table.parquet'}: 2 entities\n"


def test_errors_are_one_line_with_the_fix(table, tmp_path, capsys, monkeypatch):
    assert main(["table", "info", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    fix = "give a table.parquet, the folder holding one, or a Hugging Face Hub dataset repo id (user/name)"
    assert err == f"error: entity table {tmp_path / 'nowhere'} does not exist: {fix}\n"
    (tmp_path / "notes.parquet").write_text("not parquet")
    assert main(["table", "lookup", str(tmp_path / "notes.parquet"), "Paris"]) == 1
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert main(["table", "similar", str(table), "Warsw"]) == 1
    err = capsys.readouterr().err
    assert err == f"error: not in {table}: 'Warsw' found no entity (closest: 'Warsaw')\n"
    monkeypatch.setattr(EntityTable, "open", _raise_bug)
    assert main(["table", "info", str(table)]) == 1
    assert capsys.readouterr().err == "error: RuntimeError: a bug (--debug shows the traceback)\n"
    with pytest.raises(RuntimeError, match="a bug"):
        main(["--debug", "table", "info", str(table)])


def _raise_bug(*args, **kwargs):
    raise RuntimeError("a bug")


def test_similar_prints_the_nearest_by_cosine(tmp_path, capsys):
    rng = np.random.default_rng(0)
    ids = [f"e{i}" for i in range(40)]
    sums = rng.normal(size=(40, 3))
    write_table(tmp_path / "table.parquet", ids, sums, [1] * 40, [1] * 40, META)
    assert main(["table", "similar", str(tmp_path), "e3", "-k", "4"]) == 0
    unit = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    cosine = unit @ unit[3]
    cosine[3] = -np.inf
    expected = np.argsort(-cosine)[:4]
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [e for e, _ in lines] == [ids[i] for i in expected]
    np.testing.assert_allclose([float(c) for _, c in lines], cosine[expected], atol=1e-6)


def test_export_and_push_write_their_files(table, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["table", "export", str(table), "--format", "word2vec", str(out / "v.txt"), "--norm", "5"]) == 0
    assert (out / "v.txt").read_text() == "2 3\nParis 3 4 0\nWarsaw 0 0 5\n"
    assert main(["table", "export", str(table), "--format", "npy", str(out / "v.npy"), "--raw"]) == 0
    assert capsys.readouterr().out == f"{out / 'v.txt'}\n{out / 'v.npy'}\n{out / 'v.ids.txt'}\n"
    np.testing.assert_array_equal(np.load(out / "v.npy"), [[3, 4, 0], [0, 0, 2]])
    push = ["table", "push", str(table), "you/t", "--local", str(out / "repo"), "--corpus", "c", "--license", "x"]
    assert main(push) == 0
    assert capsys.readouterr().out == f"{out / 'repo'}\n" and (out / "repo" / "table.parquet").is_file()
    card = (out / "repo" / "README.md").read_text()
    assert 'corpus: "c"' in card and 'license: "x"' in card and "entities: 2" in card


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    n = 20_000  # ~200 KB of `pelt table ids` output: more than a pipe holds
    write_table(tmp_path / "table.parquet", [f"entity {i}" for i in range(n)], np.ones((n, 3)), [1] * n, [1] * n, META)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    process = subprocess.Popen(
        [sys.executable, "-m", "pelt", "table", "ids", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout.readline() == b"entity_id\tqid\taliases\n"
    process.stdout.close()  # what `| head -1` does
    assert process.stderr.read() == b""
    assert process.wait(timeout=60) == 141


def test_config_check_names_the_place_a_config_file_does_not_parse(tmp_path, capsys, monkeypatch):
    """Snakemake says only 'Config file is not valid JSON or YAML' of a --configfile."""
    monkeypatch.chdir(REPO)
    bad = tmp_path / "bad.yaml"
    bad.write_text("models:\n  - name: demo\n tasks: [\n")
    assert main(["config", "check", "config/config.yaml"]) == 0
    assert capsys.readouterr().out == "1 config file(s) are a config the workflow takes\n"
    assert main(["config", "check", "config/config.yaml", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{bad}:3:2: invalid YAML: "), err


def test_config_check_checks_what_the_workflow_checks_naming_file_and_key(tmp_path, capsys, monkeypatch):
    """Merged over the demo config as --configfile merges them: an unknown key with the closest known
    one, a value out of range, a data file not there, each one line naming the file that set it."""
    monkeypatch.chdir(REPO)
    over = tmp_path / "over.yaml"
    over.write_text("encoding:\n  tokens_per_batch: -5\nsampling:\n  max_sentences_per_entitty: 3\n")
    assert main(["config", "check", "config/config.yaml", str(over)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"{over}: encoding.tokens_per_batch: -5 is less than the minimum of 64; or 'auto' was expected",
        f"{over}: sampling.max_sentences_per_entitty: unknown key; did you mean 'max_sentences_per_entity'?",
    ]
    missing = tmp_path / "missing.yaml"
    missing.write_text("tasks:\n  wiki80:\n    dev: nowhere/dev.jsonl\n")
    assert main(["config", "check", "config/config.yaml", str(missing)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"{missing}: tasks.wiki80: ") and "nowhere/dev.jsonl" in line


def test_config_check_without_the_workflow_checks_the_syntax_and_says_so(tmp_path, capsys, monkeypatch):
    import pelt.cli

    monkeypatch.setattr(pelt.cli, "_workflow_root", lambda: None)
    good = tmp_path / "good.yaml"
    good.write_text("models:\n  - name: demo\n")
    assert main(["config", "check", str(good)]) == 0
    assert "YAML syntax checked, not the schema" in capsys.readouterr().out


def test_python_dash_m_pelt_runs_from_a_source_checkout(tmp_path):
    """`PYTHONPATH=src python -m pelt` without the package installed (no distribution metadata): the
    commands work and --version says where it runs from, instead of PackageNotFoundError."""
    code = (
        "import importlib.metadata as md, runpy, sys\n"
        "def missing(name): raise md.PackageNotFoundError(name)\n"
        "md.version = missing\n"
        "sys.argv = ['pelt', '--version']\n"
        "runpy.run_module('pelt', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "pelt (not installed: running from a source tree)\n"


@pytest.fixture
def ids_table(tmp_path):
    """Paris (Q90, alias Lutetia) and Warsaw, whose sums point apart."""
    path = tmp_path / "ids" / "table.parquet"
    sums = np.array([[3.0, 4.0, 0.0], [0.0, 1.0, 2.0]])
    write_table(path, ["Paris", "Warsaw"], sums, [2, 1], [9, 5], META, qids=["Q90", None], aliases=[["Lutetia"], []])
    return path


def test_every_command_that_takes_an_entity_takes_its_id_qid_alias_or_name(ids_table, capsys):
    """One resolver: what `ids` finds, `lookup` and `similar` take; a miss names the closest in one line."""
    paris = "Paris\tn_sentences=2\tfrequency=9\t3 4 0\n"
    for name in ("Paris", "Q90", "Lutetia"):
        assert main(["table", "lookup", str(ids_table), name, "--norm", "5"]) == 0
        assert capsys.readouterr().out == paris
    assert main(["table", "lookup", str(ids_table), "lutetia", "--ignore-case", "--norm", "5", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["entities"]
    assert (row["name"], row["entity_id"]) == ("lutetia", "Paris")
    assert main(["table", "similar", str(ids_table), "Q90", "-k", "1"]) == 0
    assert capsys.readouterr().out.split("\t")[0] == "Warsaw"
    assert main(["table", "similar", str(ids_table), "paris", "-k", "1", "--ignore-case"]) == 0
    assert capsys.readouterr().out.split("\t")[0] == "Warsaw"
    for command in ("similar", "lookup", "ids"):
        assert main(["table", command, str(ids_table), "Pariss"]) == 1
        err = capsys.readouterr().err
        assert err == f"error: not in {ids_table}: 'Pariss' found no entity (closest: 'Paris')\n", command
    assert main(["table", "lookup", str(ids_table), "Lutetia", "--by", "id,qid"]) == 1  # an alias only by alias
    assert "(by id,qid): 'Lutetia' found no entity (closest: 'Paris')" in capsys.readouterr().err


def test_similar_by_a_vector_file(ids_table, tmp_path, capsys):
    np.save(tmp_path / "q.npy", np.array([0.0, 1.0, 2.1], np.float32))
    assert main(["table", "similar", str(ids_table), "--vector", str(tmp_path / "q.npy"), "-k", "2"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    query = np.array([0.0, 1.0, 2.1]) / np.linalg.norm([0.0, 1.0, 2.1])
    assert [e for e, _ in lines] == ["Warsaw", "Paris"]  # no entity is left out: the query is none of them
    np.testing.assert_allclose([float(c) for _, c in lines], [query @ [0, 1, 2] / 5**0.5, query @ [0.6, 0.8, 0]], 1e-5)
    np.save(tmp_path / "wide.npy", np.ones(4))
    (tmp_path / "text.npy").write_text("not numpy")
    for name, message in (
        ("wide.npy", "float64 of shape (4,), not 3 numbers (H)"),
        ("text.npy", "not a readable .npy file"),
        ("nowhere.npy", "not a readable .npy file"),
    ):
        assert main(["table", "similar", str(ids_table), "--vector", str(tmp_path / name)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: --vector {tmp_path / name}: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["Paris", "--vector", "q.npy"], "give one of ENTITY, --vector or --word, not ENTITY and --vector"),
        ([], "give one of ENTITY, --vector or --word, not none"),
        (["--word", "city"], "--word needs --model"),
        (["Paris", "-k", "0"], "argument -k: must be at least 1, not 0"),
    ],
)
def test_a_similar_query_out_of_its_grammar_is_one_line(ids_table, capsys, arguments, message):
    with pytest.raises(SystemExit) as exit_:
        main(["table", "similar", str(ids_table), *arguments])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


def test_similar_by_a_word_compares_its_input_embedding(tiny_model_dirs, tmp_path, capsys):
    from pelt.encoding.encode import table_metadata
    from pelt.encoding.models import load_masked_lm
    from pelt.table.similar import nearest

    model_dir = str(tiny_model_dirs["roberta"])
    model, tokenizer = load_masked_lm(model_dir, device="cpu")
    embeddings = model.get_input_embeddings().weight.detach().numpy()
    word = next(t[1:] for t in tokenizer.convert_ids_to_tokens(range(300, 2000)) if t[0] == "Ġ" and t[1:].isalpha())
    (token,) = tokenizer(" " + word, add_special_tokens=False)["input_ids"]
    ids = [f"e{i}" for i in range(20)]
    sums = embeddings[np.arange(20) + 100]
    write_table(tmp_path / "table.parquet", ids, sums, [1] * 20, [1] * 20, table_metadata(model, model_dir))
    table = EntityTable.open(tmp_path / "table.parquet")
    assert main(["table", "similar", str(tmp_path), "--word", word, "--model", model_dir, "-k", "3"]) == 0
    got = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert got == [e for e, _ in nearest(table, embeddings[token], 3)]
    assert main(["table", "similar", str(tmp_path), "--word", "zqxjzqxjzqxj", "--model", model_dir]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --word 'zqxjzqxjzqxj' is ") and "not a word it knows" in err
    assert main(["table", "similar", str(tmp_path), "--word", word, "--model", str(tmp_path / "no-model")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot load masked LM '{tmp_path / 'no-model'}'") and err.count("\n") == 1
