"""The task registry: the protocol the workflow asks of it (kinds, run options, files, L), unit-tested."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import REPO

from pelt import registry
from pelt.config import (
    SpeedOnly,
    canonical,
    check_model_names,
    config_problems,
    config_schema,
    confined,
    fill_defaults,
    model_ids,
    run_name,
    yaml_problem,
)
from pelt.eval import settings
from pelt.tasks import task_entities
from pelt.tasks.fewrel import fewrel_default_training, fewrel_setting
from pelt.tasks.fewrel.settings import FewRelSettings
from pelt.tasks.lama.settings import LamaSettings
from pelt.tasks.wiki80 import wiki80_run_files
from pelt.tasks.wiki80.settings import Wiki80Settings

FEWREL2 = {
    "domain": "biomed",
    "test": "val_pubmed.json",
    "settings": ["5-1", "10-5"],
    "seeds": [42],
    "steps": 1500,
    "lr": 2e-5,
    "train_n_query": 1,
    "missing": "mask",
    "exclude": "val_wiki.json",
}
WIKI80 = {
    "domain": "wikipedia",
    "train": {"1%": "train_0.01.jsonl", "100%": "train.jsonl"},
    "dev": "dev.jsonl",
    "label2id": "label2id.json",
    "epochs": {"1%": 125, "100%": 5},
    "seeds": [42],
    "lr": 3e-5,
}


def test_kinds_of_configured_tasks():
    assert registry.kind_of("fewrel2", FEWREL2).name == "fewrel"  # FewRel 2.0 is FewRel under another key
    assert registry.kind_of("mine", {"kind": "wiki80"}).name == "wiki80"
    assert registry.kind_of("lama", {}).runner == "pelt.tasks.lama.run:run_lama"
    assert registry.kind_of("entities_drugs", {}).name == "entities"  # more than one list: entities_<name>
    with pytest.raises(ValueError, match="unknown task kind 'fewrel3'"):
        registry.kind_of("fewrel3", {})


def test_runner_options_are_the_named_hyperparameters_and_the_setting():
    options = registry.runner_options("fewrel2", FEWREL2, "10-5", 43, "pelt")
    assert options == {
        "lr": 2e-5,
        "train_n_query": 1,
        "missing": "mask",
        "steps": 1500,
        "seed": 43,
        "variant": "pelt",
        "n_way": 10,
        "k_shot": 5,
        "dataset": "fewrel2",
    }
    assert registry.runner_options("fewrel", dict(FEWREL2), "5-1", 42, "baseline")["dataset"] == "fewrel1"
    # a mapping is per training setting; data and grid keys are never passed
    wiki = registry.runner_options("wiki80", WIKI80, "1%", 42, "baseline")
    assert wiki == {"lr": 3e-5, "epochs": 125, "seed": 42, "variant": "baseline", "setting": "1%"}
    with pytest.raises(ValueError, match="two positive integers"):
        fewrel_setting("5-0")
    assert registry.settings_of("fewrel2", FEWREL2) == ["5-1", "10-5"]
    assert registry.settings_of("wiki80", WIKI80) == ["1%", "100%"]


def test_the_rules_find_their_tasks_and_summaries_through_the_kinds():
    # what the .smk files ask instead of naming kinds: a kind's tasks (FewRel 2.0 among FewRel's),
    # the fine-tuned tasks (one result per setting and seed) and the summaries each one feeds
    tasks = {"lama": {}, "fewrel": FEWREL2, "fewrel2": FEWREL2, "wiki80": WIKI80, "entities_x": {}}
    assert registry.tasks_of_kind(tasks, "fewrel") == ["fewrel", "fewrel2"]
    assert registry.tasks_of_kind(tasks, "wiki80") == ["wiki80"]
    assert registry.finetuned_tasks(tasks) == ["fewrel", "fewrel2", "wiki80"]
    assert registry.finetuned_tasks(tasks, "fewrel") == ["fewrel", "fewrel2"]
    assert registry.finetuned_tasks(tasks, "wiki80") == ["wiki80"]
    assert registry.finetuning_summaries() == ["fewrel", "wiki80"]
    with pytest.raises(ValueError, match="not fine-tuned per setting"):
        registry.settings_of("lama", {})


def test_a_new_task_kind_is_one_registry_entry(tmp_path, monkeypatch):
    """Issue 27: a task kind plugs in by its entry alone. What the workflow asks of a task (its
    kind's tasks, settings, files, run options, summaries and entities) comes from the entry: no
    function of the registry, and none that the rules call, names a kind."""
    toy = registry.TaskKind(
        "toy",
        data_keys=("items",),
        file_keys=("items",),
        grid_keys=("rounds", "seeds"),
        hyperparameters=("lr",),
        runner="toy:run_toy",  # resolved by the job, never while planning
        entity_reader="pelt.tasks.entities.data:listed_entities",
        summaries={"toy": "toy:write_summary"},
        run_files=lambda name, task, tasks, setting: {"items": task["items"], "round": setting},
        settings_key="rounds",
    )
    monkeypatch.setitem(registry.KINDS, "toy", toy)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "items.txt").write_text("Valdoria\nMarbeck\n", encoding="utf-8")
    task = {"domain": "wiki", "items": "items.txt", "rounds": ["a", "b"], "seeds": [1], "lr": 0.1}
    tasks = {"toy": task, "mine": dict(task, kind="toy"), "wiki80": WIKI80}
    assert registry.tasks_of_kind(tasks, "toy") == ["toy", "mine"]
    assert registry.finetuned_tasks(tasks, "toy") == ["toy", "mine"]
    assert registry.finetuning_summaries() == ["fewrel", "wiki80", "toy"]
    assert registry.settings_of("mine", tasks["mine"]) == ["a", "b"]
    assert registry.data_files("mine", tasks["mine"], tasks) == {"items": ["items.txt"]}
    assert registry.run_files("toy", task, tasks, "b") == {"items": "items.txt", "round": "b"}
    options = registry.runner_options("toy", task, "b", 1, "pelt")
    assert options == {"lr": 0.1, "seed": 1, "variant": "pelt", "setting": "b"}
    registry.check_task("toy", task, tasks)
    assert task_entities({"mine": tasks["mine"]}, "wiki") == [("Marbeck", None), ("Valdoria", None)]


def test_run_files_and_the_fewrel_training_default():
    assert wiki80_run_files(WIKI80, "100%") == {
        "train": "train.jsonl",
        "label2id": "label2id.json",
        "eval": "dev.jsonl",
    }
    with_test = dict(WIKI80, test="test.jsonl")  # the paper's protocol: select on dev, report test
    assert wiki80_run_files(with_test, "1%")["eval"] == "test.jsonl"
    assert wiki80_run_files(with_test, "1%")["select_on"] == "dev.jsonl"
    tasks = {"fewrel2": FEWREL2, "wiki80": with_test}
    assert fewrel_default_training("fewrel2", FEWREL2, tasks) == [
        "train_0.01.jsonl",
        "train.jsonl",
        "dev.jsonl",
        "test.jsonl",
    ]
    assert fewrel_default_training("fewrel2", dict(FEWREL2, steps=0), {"fewrel2": FEWREL2}) == []
    with pytest.raises(ValueError, match="no tasks.wiki80 to train on"):
        fewrel_default_training("fewrel2", FEWREL2, {"fewrel2": FEWREL2})


def test_the_kinds_name_their_data_and_run_files(tmp_path, monkeypatch):
    # the workflow asks these instead of naming kinds: a task's entity files, one run's files, its checks
    monkeypatch.chdir(tmp_path)
    for name in ("val_pubmed.json", "val_wiki.json", "train_0.01.jsonl", "train.jsonl", "dev.jsonl", "P19.jsonl"):
        (tmp_path / name).touch()
    tasks = {"fewrel2": FEWREL2, "wiki80": WIKI80}
    wiki80_files = ["train_0.01.jsonl", "train.jsonl", "dev.jsonl"]
    assert registry.data_files("fewrel2", FEWREL2, tasks) == {"test": ["val_pubmed.json"], "train": wiki80_files}
    assert registry.data_files("wiki80", WIKI80, tasks) == {"train": wiki80_files[:2], "dev": ["dev.jsonl"]}
    assert registry.run_files("fewrel2", FEWREL2, tasks) == {
        "train": wiki80_files,
        "val": [],
        "test": ["val_pubmed.json"],
        "exclude": ["val_wiki.json"],
    }
    lama = {"facts": "P*.jsonl", "relations": "relations.jsonl", "common_vocab": "vocab.txt"}
    assert registry.run_files("lama", lama, {"lama": lama})["facts"] == ["P19.jsonl"]
    with pytest.raises(ValueError, match="not evaluated"):
        registry.run_files("entities", {"entities": "x.txt"}, {})
    with pytest.raises(FileNotFoundError, match=r"tasks.lama.facts: no file matches 'Q\*.jsonl'"):
        registry.check_task("lama", dict(lama, facts="Q*.jsonl"), {})
    with pytest.raises(ValueError, match=r"no epochs for the training settings \['100%'\]"):
        registry.check_task("wiki80", dict(WIKI80, epochs={"1%": 125}), tasks)
    kinds = [registry.kind_of(name, task) for name, task in {**tasks, "lama": lama}.items()]
    assert [s for kind in kinds for s in kind.summaries] == ["fewrel", "wiki80", "lama", "norm_sweep"]


def test_norm_comes_from_the_sweep_unless_configured():
    sweep = "eval/lama/{model}/norm_sweep.json"
    assert registry.norm_sweep({"name": "demo"}, {"wiki80": WIKI80, "lama": {}}) == sweep
    assert registry.norm_sweep({"name": "demo", "norm": 7}, {"lama": {}}) is None
    assert registry.norm_sweep({"name": "demo"}, {"wiki80": WIKI80}) is None
    # the kind sweeps, whatever the task's key
    assert registry.norm_sweep({"name": "demo"}, {"probe": {"kind": "lama"}}) == "eval/probe/{model}/norm_sweep.json"


def test_the_headline_leads_with_the_kinds_that_say_so():
    assert registry.headline_results({"wiki80": WIKI80, "lama": {}}) == ["eval/lama/{model}/{variant}.json"]
    assert registry.headline_results({"wiki80": WIKI80}) == []
    assert registry.norm_sweeps({"wiki80": WIKI80}) == []


@pytest.mark.parametrize("kind", [kind for kind in registry.KINDS.values() if kind.norm_sweep or kind.headline])
def test_a_kinds_sweep_and_headline_results_are_outputs_of_its_rules(kind):
    """What the registry names (the sweep that chooses L, the headline's results) is what the
    kind's own rules write."""
    text = (REPO / kind.rules).read_text()
    for pattern in filter(None, (kind.norm_sweep, kind.headline)):
        path = pattern.format(task=kind.name, model="{model}", variant="{variant}")
        assert re.search(rf"^\s+(\w+=)?results\(\"{re.escape(path)}\"\),$", text, re.M), path


@pytest.mark.parametrize("kind", ["fewrel", "wiki80"])
def test_every_configurable_key_has_a_role_and_reaches_the_runner(kind):
    schema = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    properties = (
        schema["$defs"]["fewrel"] if kind == "fewrel" else schema["properties"]["tasks"]["properties"]["wiki80"]
    )["properties"]
    entry = registry.KINDS[kind]
    roles = set(registry.DOMAIN_KEYS) | set(entry.file_keys) | set(entry.grid_keys) | set(entry.hyperparameters)
    assert set(properties) <= roles, sorted(set(properties) - roles)
    assert set(entry.hyperparameters) <= _settings_keys(kind)


def test_every_kind_names_a_reader_and_the_papers_benchmarks():
    from pelt.report.paper import PAPER_RESULTS
    from pelt.tasks.fewrel import BENCHMARKS

    assert sorted(b for kind in registry.KINDS.values() for b in kind.benchmarks) == sorted(PAPER_RESULTS)
    assert set(BENCHMARKS.values()) == set(registry.KINDS["fewrel"].benchmarks)
    for kind in registry.KINDS.values():
        assert callable(registry.resolve(kind.entity_reader))
        assert (kind.runner is None) == (kind.name == "entities")  # only an entity list evaluates nothing
        assert kind.runner is None or callable(registry.resolve(kind.runner))
        # its own numbers and settings, in its package
        assert set(registry.resolve(kind.paper) if kind.paper else {}) == set(kind.benchmarks)
        assert (kind.settings is None) == (kind.runner is None)
        assert kind.settings is None or registry.resolve(kind.settings).__module__ == f"pelt.tasks.{kind.name}.settings"


@pytest.mark.parametrize("kind", list(registry.KINDS.values()), ids=lambda kind: kind.name)
def test_each_built_in_kind_registers_itself_from_its_package(kind):
    """Issue 53: a built-in kind is its package, registered as one from outside pelt is; its summaries
    and figures are found through its entry, each in its package or the fine-tuning kinds' shared figure."""
    assert registry.resolve(f"pelt.tasks.{kind.name}:KIND") is kind
    for writer in [*kind.summaries.values(), *kind.figures.values()]:
        module = writer.partition(":")[0]
        assert callable(registry.resolve(writer)) and module.startswith((f"pelt.tasks.{kind.name}.", "pelt.report.")), (
            writer
        )
    assert all(registry.summary_writer(name) == writer for name, writer in kind.summaries.items())
    assert all(registry.figure_writer(name) == writer for name, writer in kind.figures.items())
    assert kind.rules is None or (REPO / kind.rules).exists()
    assert (kind.rules == registry.FINETUNING_RULES) == (kind.script is not None)


def test_the_kinds_name_their_tasks_benchmarks_and_chance():
    """Aliases, key prefixes, the tables' names of benchmarks and the chance level are the kinds'."""
    assert [registry.kind_named(key) for key in ("fewrel2", "mlama_de", "entities_drugs", "wiki80", "toy")] == [
        "fewrel",
        "mlama",
        "entities",
        "wiki80",
        "toy",
    ]
    assert [registry.benchmark_label(b) for b in ("fewrel1", "fewrel2", "wiki80", "other")] == [
        "FewRel 1.0",
        "FewRel 2.0",
        "Wiki80",
        "other",
    ]
    assert registry.benchmark_kind("fewrel2").name == "fewrel" and registry.benchmark_kind("other") is None
    assert registry.KINDS["fewrel"].chance_level("10-1", None) == 0.1 and registry.KINDS["wiki80"].chance_level is None
    assert registry.archives() == {"LAMA/data.zip": "LAMA/release", "mLAMA/mlama1.1.zip": "mLAMA/release"}
    assert [kind.name for kind in registry.kinds_with_rules(registry.FINETUNING_RULES)] == ["fewrel", "wiki80"]
    with pytest.raises(ValueError, match="no registered task kind has summaries named 'nothing'"):
        registry.summary_writer("nothing")


def test_a_kind_from_outside_pelt_registers_once(monkeypatch):
    monkeypatch.setattr(registry, "KINDS", dict(registry.KINDS))
    toy = registry.TaskKind("toy", data_keys=("items",), runner=None, entity_reader="toy:read")
    assert registry.register(toy) is toy and registry.register(toy) is toy  # a package imported twice
    with pytest.raises(ValueError, match="task_kinds: a task kind named 'lama' is already registered"):
        registry.register(registry.TaskKind("lama", data_keys=(), runner=None, entity_reader="toy:read"))
    with pytest.raises(ValueError, match="task_kinds: cannot import 'no_such_kind'"):
        registry.import_kinds(["no_such_kind"])


def test_a_corpus_kind_from_outside_pelt_registers_once(monkeypatch):
    monkeypatch.setattr(registry, "CORPUS_KINDS", dict(registry.CORPUS_KINDS))
    toy = registry.CorpusKind("toy", has_pages=False, rules="toy.smk")
    assert registry.register(toy) is toy and registry.register(toy) is toy
    assert registry.CORPUS_KINDS["toy"] is toy and "toy" not in registry.KINDS
    with pytest.raises(ValueError, match="corpus_kinds: a corpus kind named 's2orc' is already registered"):
        registry.register(registry.CorpusKind("s2orc", has_pages=True, rules="toy.smk"))
    with pytest.raises(ValueError, match="corpus_kinds: cannot import 'no_such_kind'"):
        registry.import_kinds(["no_such_kind"], "corpus_kinds")


def test_a_corpus_kinds_schema_block_holds_its_own_keys(tmp_path, monkeypatch):
    """Wikipedia's page_props is its block's, not every corpus's; a kind's keys get their defaults."""
    workflow = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    assert "page_props" not in workflow["properties"]["corpora"]["additionalProperties"]["properties"]
    (tmp_path / "toy.yaml").write_text("properties:\n  n: {type: integer, default: 3}\n")
    toy = registry.CorpusKind("toy", has_pages=False, rules="toy.smk", schema=str(tmp_path / "toy.yaml"))
    monkeypatch.setitem(registry.CORPUS_KINDS, "toy", toy)
    schema = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["corpora"] = {
        "t": {"kind": "toy", "path": "t.txt"},
        "w": {"kind": "wikipedia", "path": "w.xml.bz2", "page_props": "p.sql.gz", "n": 1},
        "s": {"kind": "s2orc", "path": "s.jsonl", "page_props": "p.sql.gz"},
    }
    assert config_problems(config, schema) == [
        "corpora.s.page_props: unknown key; known keys: kind, path, language, kinds",
        "corpora.w.n: unknown key; known keys: kind, path, language, kinds, page_props",
    ]
    del config["corpora"]["s"]["page_props"], config["corpora"]["w"]["n"]
    fill_defaults(config, schema)
    assert config["corpora"]["t"] == {"kind": "toy", "path": "t.txt", "n": 3}
    assert "n" not in config["corpora"]["w"]


def test_each_kinds_schema_block_joins_the_config_schema(tmp_path, monkeypatch):
    # the workflow's schema names no kind; each kind's keys come from its block
    workflow = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    assert list(workflow["properties"]["tasks"]["properties"]) == ["entities", "fewrel", "fewrel2", "lama", "wiki80"]
    (tmp_path / "toy.yaml").write_text("properties:\n  toy: {type: object, properties: {n: {default: 3}}}\n")
    toy = registry.TaskKind(
        "toy", data_keys=(), runner=None, entity_reader="toy:read", schema=str(tmp_path / "toy.yaml")
    )
    monkeypatch.setitem(registry.KINDS, "toy", toy)
    schema = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    config = {"corpora": {"w": {"kind": "s2orc", "path": "x"}}, "models": [{"name": "demo"}], "tasks": {"toy": {}}}
    assert config_problems(config, schema) == []
    fill_defaults(config, schema)
    assert config["tasks"]["toy"] == {"n": 3} and config["sampling"]["entities"] == "on_demand"


SETTINGS = {name: registry.resolve(kind.settings) for name, kind in registry.KINDS.items() if kind.settings}


def _task_properties(kind: registry.TaskKind) -> tuple[dict, dict]:
    """The properties a task of the kind takes: in its schema block as written, and in the config's
    schema as built (pelt.config.config_schema)."""
    block = yaml.safe_load((REPO / kind.schema).read_text())
    schema = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    section, key = next(
        (section, key) for section in ("properties", "patternProperties") for key in block.get(section, {})
    )

    def resolved(entry: dict, defs: dict) -> dict:
        return (defs[entry["$ref"].rsplit("/", 1)[1]] if "$ref" in entry else entry)["properties"]

    tasks = schema["properties"]["tasks"]
    return resolved(block[section][key], block.get("$defs", {})), resolved(tasks[section][key], schema["$defs"])


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_each_default_is_written_once_in_the_settings_and_taken_by_the_schema(name):
    """Issue 53: a hyper-parameter's default (read_at's too) is written in its kind's settings only;
    the config schema takes it from there (pelt.config.config_schema), so that a library user
    calling the runner gets what the workflow would run; the kind's block states none of them (a
    per-setting mapping, Wiki80's epochs, is the config's own)."""
    kind = registry.KINDS[name]
    defaults = settings.as_record(SETTINGS[name]())
    block, properties = _task_properties(kind)
    for key in kind.hyperparameters:
        assert properties[key].get("default") == defaults[key] or isinstance(properties[key].get("default"), dict), key
        assert "default" not in block[key] or isinstance(block[key]["default"], dict), key
    raw = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())["$defs"]
    assert not any("default" in raw[name] for name in ("missing", "markers", "read_at")), "filled from beside each $ref"


def test_lama_uhns_default_is_the_librarys():
    """LAMA-UHN's filter takes its own options (no settings dataclass): the schema's default of
    ``top_k`` is the library's, and the job passes the config's."""
    from pelt.tasks.lama.uhn import TOP_K

    block, _ = _task_properties(registry.KINDS["lama"])
    assert block["uhn"]["properties"]["top_k"]["default"] == TOP_K
    assert 'uhn["top_k"]' in (REPO / "workflow" / "scripts" / "lama_uhn.py").read_text()


def test_the_schemas_named_choices_are_the_librarys():
    """The values the config takes for read_at and markers are those pelt.eval.settings knows, and
    for missing those the injection knows."""
    from pelt.encoding.injection import MISSING

    defs = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)["$defs"]
    assert defs["read_at"]["enum"] == list(settings.READ_AT)
    assert defs["markers"]["enum"] == list(settings.MARKERS)
    assert defs["missing"]["enum"] == list(MISSING)


def _settings_keys(kind: str) -> set[str]:
    """The flat keys a kind's settings object takes (:func:`pelt.eval.settings.parse`)."""
    return set(settings.as_record(SETTINGS[kind]()))


def test_settings_parse_flat_options_and_refuse_unknown_keys():
    parsed = settings.parse(FewRelSettings, {"steps": 60, "markers": "tokens", "read_at": "slots"})
    assert parsed.steps == 60 and parsed.encoder == settings.EncoderSettings(markers="tokens", read_at="slots")
    assert settings.as_record(parsed)["markers"] == "tokens" and "encoder" not in settings.as_record(parsed)
    with pytest.raises(ValueError, match=r"unknown settings \['stpes'\]"):
        settings.parse(FewRelSettings, {"stpes": 60})
    with pytest.raises(ValueError, match=r"unknown settings \['markers'\]"):
        settings.parse(LamaSettings, {"markers": "tokens"})  # LAMA has no relation encoder
    with pytest.raises(ValueError, match="first_eval"):
        FewRelSettings(steps=10, first_eval=20)
    # FewRel and Wiki80 share one optimiser's settings, each with its own defaults under a key given
    few = settings.parse(FewRelSettings, {"lr": 1e-4, "max_grad_norm": None})
    assert few.optimizer == settings.OptimizerSettings(lr=1e-4, weight_decay=0.01, max_grad_norm=None)
    wiki = settings.parse(Wiki80Settings, {"warmup": 0.2})
    assert wiki.optimizer == settings.OptimizerSettings(lr=3e-5, warmup=0.2, weight_decay=0.0)
    assert settings.as_record(wiki)["lr"] == 3e-5 and "optimizer" not in settings.as_record(wiki)


def test_corpus_kinds_decide_linker_and_resolver_by_their_pages(monkeypatch):
    # the schema's corpus kinds are the registry's: a new one is an entry, not also a schema edit
    toy = registry.CorpusKind("toy", has_pages=False, rules="toy.smk")
    monkeypatch.setitem(registry.CORPUS_KINDS, "toy", toy)
    schema = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    assert schema["properties"]["corpora"]["additionalProperties"]["properties"]["kind"]["enum"] == [
        "wikipedia",
        "s2orc",
        "toy",
    ]
    corpora = {"wiki": {"kind": "wikipedia"}, "bio": {"kind": "s2orc"}, "pubmed": {"kind": "s2orc"}}
    assert registry.domains_with_pages(corpora, True) == ["wiki"]
    assert registry.domains_with_pages(corpora, False) == ["bio", "pubmed"]


RULE = re.compile(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", re.M)


@pytest.mark.parametrize("kind", list(registry.CORPUS_KINDS.values()), ids=lambda kind: kind.name)
def test_each_corpus_kinds_rules_file_defines_its_corpus_job_and_with_pages_its_linker(kind):
    """Issue 27: a corpus kind's jobs come from its rules file (the Snakefile includes it from the
    registry), each for the domains of its kind and with its log: its corpus job and, with pages, its
    linker; a kind without pages has no linker of its own (the shared string linker links it)."""
    rules = dict(RULE.findall((REPO / kind.rules).read_text()))
    assert f"corpus_{kind.name}" in rules, sorted(rules)
    for name, body in rules.items():
        assert f'domain=domains_of_kind("{kind.name}")' in body and "\n    log:\n" in body, name
    linkers = [name for name, body in rules.items() if 'aliases=directory(results("linking/{domain}/aliases"))' in body]
    assert len(linkers) == kind.has_pages, linkers


def test_the_shared_rules_name_no_corpus_kind():
    """The shared rules files ask the registry (``domains_with_pages``) and define no kind's job."""
    for path in [REPO / "Snakefile", *(REPO / "workflow" / "rules").glob("*.smk")]:
        text = path.read_text()
        for kind in registry.CORPUS_KINDS:
            assert f'"{kind}"' not in text and f"rule corpus_{kind}:" not in text, (path.name, kind)


@pytest.mark.parametrize("relative", ["../x", "LAMA/../../x", "/etc/x", "..", ".", "", "a/.."])
def test_a_path_from_the_config_that_leaves_its_folder_is_refused_naming_the_key(relative):
    with pytest.raises(ValueError, match=rf"^download.files.k: {re.escape(repr(relative))} is not a path inside data/"):
        confined("data", relative, "download.files.k")


def test_a_path_inside_its_folder_is_joined():
    assert confined("data", "fewrel/train_wiki.json", "download.files.k") == "data/fewrel/train_wiki.json"
    assert confined("data", "..x/a..b", "k") == "data/..x/a..b"  # dots in a name are not `..`


@pytest.mark.parametrize(
    "models, named",
    [
        (
            [{"name": "org/x"}, {"name": "org--x"}],
            r"models\[0\] \('org/x'\) and models\[1\] \('org--x'\) both get the id 'org--x'",
        ),
        ([{"name": "demo"}, {"name": "b"}, {"name": "demo"}], r"models\[0\] \('demo'\) and models\[2\] \('demo'\)"),
        ([{"name": "a"}, {"name": "b", "id": "a"}], r"models\[0\] \('a'\) and models\[1\] \('b'\) both get the id 'a'"),
        ([{"name": ".."}], r"models\[0\].id: '..' is not a path inside"),
        ([{"name": "x", "id": "."}], r"models\[0\].id: '.' is not a path inside"),
    ],
)
def test_model_ids_that_collide_or_leave_their_folder_are_refused(models, named):
    """Two models with one id would write the same files (one silently dropped); `..` would write
    beside the model folders. Each is one line naming the entries and the id."""
    with pytest.raises(ValueError, match=named):
        model_ids(models)


def test_model_ids_are_path_safe_names_or_the_configured_id():
    models = [{"name": "roberta-base"}, {"name": "org/x"}, {"name": "/abs/model", "id": "mine"}]
    assert list(model_ids(models)) == ["roberta-base", "org--x", "mine"]


def test_a_run_is_named_by_its_key_else_its_last_config_file(tmp_path, monkeypatch):
    """A second config's outputs go under runs/<name>/ (pelt.config.run_name): `run` as configured,
    else the last --configfile's stem; the default config, given or not, and `run: ""` keep results/."""
    monkeypatch.chdir(tmp_path)
    default = "config/config.yaml"
    assert run_name(None, [], default) is None
    assert run_name(None, [str(tmp_path / default)], default) is None  # the default file, named
    assert run_name(None, ["config/paper.yaml"], default) == "paper"
    assert run_name(None, [default, "lists/my list.yaml"], default) == "my_list"  # over the demo's: the last
    assert run_name("x", [default, "mine.yaml"], default) == "x"
    assert run_name("", ["fast_spark.yaml"], default) is None


@pytest.mark.parametrize("run", ["a/b", "..", ".", "my run", "/tmp/x", "x\\y"])
def test_a_run_name_that_is_not_one_folder_is_refused_in_a_line(run):
    with pytest.raises(ValueError, match=r"^run: .* (is not a folder name|is not a path inside runs/)") as err:
        run_name(run, [], "config/config.yaml")
    assert "\n" not in str(err.value)


def test_a_file_name_with_glob_characters_is_that_file(tmp_path):
    """`[de]` in a file name reads as a glob that matches `d` or `e`, not itself: an existing file's
    own name comes first, a pattern that names no file is still a glob."""
    for name in ("dump [de] : ü.xml.bz2", "dump d : ü.xml.bz2"):
        (tmp_path / name).write_bytes(b"")
    named = str(tmp_path / "dump [de] : ü.xml.bz2")
    assert registry.expand_globs(named, "corpora.w.path") == [named]
    assert registry.expand_globs(str(tmp_path / "dump [d] : ü.xml.bz2"), "k") == [str(tmp_path / "dump d : ü.xml.bz2")]


@pytest.mark.parametrize("name", ["./models/robrta", "/no/such/model", "org/name/extra", "org/..", "a b"])
def test_a_model_name_nothing_could_load_is_refused_before_the_first_job(name):
    with pytest.raises(ValueError, match=rf"^models\[1\].name: {re.escape(repr(name))} is no local path that exists"):
        check_model_names([{"name": "demo"}, {"name": name}])


def test_hub_names_and_existing_paths_are_models(tmp_path):
    names = ["demo", "roberta-base", "facebook/bart-base", "no-such-org/no-such-model", str(tmp_path)]
    check_model_names([{"name": name} for name in names])  # hub names are not looked up: no network


def test_yaml_problem_names_file_line_and_column(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("a: 1\nb: [2, 3]\n")
    bad.write_text("a: 1\nb:\n  - x\n c: y\n")  # one space short: c belongs nowhere
    assert yaml_problem(good) is None
    assert yaml_problem(bad) == f"{bad}:4:2: invalid YAML: expected <block end>, but found '<block mapping start>'"


def test_params_compare_alike_whatever_the_key_order_and_speed_settings():
    """Snakemake compares a rule's params by repr: canonical sorts keys at every depth, and a
    SpeedOnly mapping's repr never changes, while it still hands the job its values."""
    a = {"b": {"y": 1, "x": [{"q": 1, "p": 2}]}, "a": 2}
    b = {"a": 2, "b": {"x": [{"p": 2, "q": 1}], "y": 1}}
    assert repr(a) != repr(b) and repr(canonical(a)) == repr(canonical(b)) and canonical(a) == a
    assert repr(canonical({"a": 1})) != repr(canonical({"a": 2}))
    files = {"100%": str(REPO / "pyproject.toml"), "1%": str(REPO / "Makefile")}  # Wiki80's train files
    assert registry.expand_globs(files, "k") == registry.expand_globs(dict(reversed(files.items())), "k")
    fast, slow = SpeedOnly(java_options="-Xss4m"), SpeedOnly(java_options="-Xss8m", driver_memory="3g")
    assert repr(fast) == repr(slow) and dict(slow) == {"java_options": "-Xss8m", "driver_memory": "3g"}
