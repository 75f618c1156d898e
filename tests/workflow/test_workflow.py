"""The workflow as a user runs it: lint, formatting, config errors, and the demo end to end."""

from __future__ import annotations

import base64
import bz2
import csv
import json
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from demo_run import (
    CORPUS_FILE,
    DEMO,
    PAPER_WORKDIR,
    REPO,
    SNAKEMAKE,
    TEST_CONFIG,
    absolute,
    planned_jobs,
    snakemake,
    write_config,
)
from html_pages import html_rows

from pelt import registry
from pelt.table import EntityTable
from pelt.table.hub import corpus_license


def test_lint_is_clean():
    run = subprocess.run([*SNAKEMAKE, "--lint"], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Lints for" not in run.stdout + run.stderr, run.stdout + run.stderr


def test_snakefmt_is_clean():
    files = ["Snakefile", *map(str, sorted((REPO / "workflow" / "rules").glob("*.smk")))]
    run = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", *files], capture_output=True, text=True, cwd=REPO
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff_is_clean(command):
    run = subprocess.run([sys.executable, "-m", "ruff", *command, "."], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stdout + run.stderr


def test_jobs_import_the_workflows_own_pelt(tmp_path):
    """A job's script imports src/pelt of the workflow's checkout, through the one path that
    common.smk sets (no link to it beside the scripts, no install needed), ahead of any installed
    pelt: run by a Python that has the environment's packages but, in place of an installed pelt, one
    that fails on import (a .pth line adds the packages' folder without its .pth files, and so
    without an editable install of pelt)."""
    env = tmp_path / "env"
    venv.create(env, with_pip=False)
    packages = Path(sysconfig.get_path("purelib", vars={"base": str(env)}))
    (packages / "environment.pth").write_text("".join(f"{path}\n" for path in site.getsitepackages()))
    (packages / "pelt").mkdir()
    (packages / "pelt" / "__init__.py").write_text('raise ImportError("an installed pelt, not the workflow\'s")\n')
    work = tmp_path / "work"
    write_config(work)
    (work / "data" / "LAMA").mkdir(parents=True)  # release_archive, a job that takes a second
    with zipfile.ZipFile(work / "data" / "LAMA" / "data.zip", "w") as zf:
        zf.writestr("data/relations.jsonl", '{"relation": "P19"}\n')
    run = snakemake(work, "--cores", "1", "data/LAMA/release", python=env / "bin" / "python")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (work / "data" / "LAMA" / "release" / "data" / "relations.jsonl").read_text() == '{"relation": "P19"}\n'


def test_the_default_profile_is_the_one_beside_the_snakefile(tmp_path):
    """Snakemake 9 reads profiles/default of the Snakefile's folder (or of the working directory) by
    itself: the catalog's workflow/profiles/default is that place for a workflow/Snakefile."""
    write_config(tmp_path)
    run = snakemake(tmp_path, "-n")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"workflow specific profile {REPO / 'profiles' / 'default'} " in run.stdout + run.stderr


def test_the_suites_lama_facts_add_to_the_demos():
    """.test/config/config.yaml replaces the list of LAMA facts (a merge replaces lists): it must keep
    the demo's, then add its own."""
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["tasks"]["lama"]["facts"]
    suite = yaml.safe_load(TEST_CONFIG.read_text())["tasks"]["lama"]["facts"]
    assert suite[: len(demo)] == demo and len(suite) > len(demo), suite


@pytest.mark.parametrize(
    ("section", "values", "named"),
    [
        ("corpora", {"wikipedia": {"kind": "wikipeda", "path": "x"}}, "corpora.wikipedia.kind: 'wikipeda' is not"),
        (
            "sampling",
            {"max_sentences_per_entiti": 3},
            "max_sentences_per_entiti: unknown key; did you mean 'max_sentences_per_entity'?",
        ),
        ("encoding", {"precision": "fp8"}, "encoding.precision: 'fp8' is not one of"),
        (
            "tasks",
            {"fewrel": {"domain": "wikipedia", "test": "x", "settings": ["5-1", "5x1"]}},
            "tasks.fewrel.settings.1:",
        ),
    ],
)
def test_bad_config_names_the_key(tmp_path, section, values, named):
    write_config(tmp_path, **{section: values})
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert "Error validating config file" in out, out
    assert named in out, out
    assert "Traceback" not in out, out
    assert len(out.splitlines()) < 15, out  # the key and the problem, not the schema and the config


def test_a_config_file_that_does_not_parse_is_named_with_its_line(tmp_path):
    """A syntax error in config/config.yaml: the file, line and column in one line, no traceback."""
    write_config(tmp_path)
    config = tmp_path / "config" / "config.yaml"
    config.write_text(config.read_text() + "sampling:\n  seed: [42\n")
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    out = run.stdout + run.stderr
    line = len(config.read_text().splitlines())  # the list is still open at the end of the file
    assert re.search(rf"config/config\.yaml:{line + 1}:1: invalid YAML: expected ',' or '\]'", out), out
    assert "Traceback" not in out and len(out.splitlines()) < 8, out


def test_the_paper_download_plans_on_a_machine_without_its_files(tmp_path):
    """`snakemake download --configfile config/paper.yaml`, as docs/running.md teaches, in an empty
    folder: the tasks' and corpora's files under data/ are the download's to write, so they are not
    asked for before it (they were, and the documented first command failed on a fresh machine)."""
    run = snakemake(tmp_path, "download", "-n", "--configfile", str(REPO / "config" / "paper.yaml"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    planned = {job["rule"] for job in planned_jobs(run.stdout)}
    assert {"enwiki_checksums", "enwiki_file", "release_archive", "release_file", "download"} <= planned, planned


def test_a_corpus_glob_matching_nothing_stops_the_plan_in_a_line(tmp_path):
    """Checked with the config, before any rule asks for the corpus (inside an input function it was
    reported as an error of the rule entity_table)."""
    write_config(tmp_path, corpora={"wikipedia": {"kind": "wikipedia", "path": str(tmp_path / "enwiki-*.xml.bz2")}})
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert f"corpora.wikipedia.path: no file matches '{tmp_path / 'enwiki-*.xml.bz2'}'" in out, out
    assert "InputFunctionException" not in out and "rule entity_table" not in out, out


@pytest.mark.parametrize(
    ("tasks", "named"),
    [
        ({"fewrel": {"domain": "wikipedia", "test": str(DEMO / "fewrel" / "val_wiki.json")}}, "tasks.fewrel.train"),
        (
            {
                "wiki80": {
                    "domain": "wikipedia",
                    "train": {"1%": str(DEMO / "wiki80" / "train.jsonl")},
                    "epochs": {"100%": 1},
                    "dev": str(DEMO / "wiki80" / "dev.jsonl"),
                    "label2id": str(DEMO / "wiki80" / "label2id.json"),
                }
            },
            "tasks.wiki80.epochs",
        ),
    ],
)
def test_finetuning_config_errors_name_the_key(tmp_path, tasks, named):
    """A FewRel task with nothing to train on (no `train`, no wiki80 task, steps > 0) and a Wiki80 training
    setting without epochs are refused before anything runs, naming the key."""
    config = write_config(tmp_path)
    config["tasks"] = tasks
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert named in out and "Traceback" not in out, out


@pytest.mark.parametrize(
    "section, value, named",
    [
        ("download", {"files": {"../outside.txt": {"url": "https://example.org/x"}}}, "download.files.../outside.txt:"),
        ("models", [{"name": "org/x"}, {"name": "org--x"}], "models[0] ('org/x') and models[1] ('org--x')"),
        ("models", [{"name": ".."}], "models[0].id: '..' is not a path inside"),
        ("models", [{"name": "demo"}, {"name": "./models/robrta"}], "models[1].name: './models/robrta' is no local"),
    ],
)
def test_paths_leaving_their_folder_and_colliding_model_ids_are_refused(tmp_path, section, value, named):
    """A `download.files` key or a model id that would write outside its folder, and two models
    that would write the same files, are refused before anything runs, in one line naming them."""
    config = write_config(tmp_path)
    config[section] = value
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and named in out and "Traceback" not in out, out


def test_a_corpus_file_with_an_odd_name_is_planned(tmp_path):
    """`[`, `:`, spaces and non-ASCII letters in corpus file names: the files are the inputs of their
    corpus jobs (the literal name, not the glob it reads as), under ids made of their names."""
    config = write_config(tmp_path)
    odd = {"wikipedia": "dump [de] : ü.xml.bz2", "page_props": "props [de] ü.sql.gz", "biomed": "s2orc [x] ü.jsonl"}
    for key, (domain, field) in {
        "wikipedia": ("wikipedia", "path"),
        "page_props": ("wikipedia", "page_props"),
        "biomed": ("biomed", "path"),
    }.items():
        shutil.copy(config["corpora"][domain][field], tmp_path / odd[key])
        config["corpora"][domain][field] = odd[key]
    (tmp_path / "dump d : ü.xml.bz2").write_bytes(b"")  # what `[de]` matches as a glob
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    corpus = {job["rule"]: job for job in planned_jobs(run.stdout) if job["rule"].startswith("corpus_")}
    assert corpus["corpus_wikipedia"]["input"] == [odd["wikipedia"], odd["page_props"]], corpus
    assert corpus["corpus_wikipedia"]["output"][0] == "results/corpus/wikipedia/files/dump__de____ü.xml.bz2/documents"
    assert corpus["corpus_s2orc"]["input"] == [odd["biomed"]], corpus


def test_a_config_file_runs_its_own_keys_and_none_of_the_demos(tmp_path):
    """`--configfile config/paper.yaml` must not inherit the demo config's keys (its page_props, its
    two encoding shards): a config file given on the command line replaces the demo's."""
    demo = write_config(tmp_path)  # the demo default, where the Snakefile looks for it
    own = json.loads(json.dumps(demo))
    del own["encoding"]["shards"], own["corpora"]["wikipedia"]["page_props"]
    (tmp_path / "own.yaml").write_text(yaml.safe_dump(own))
    runs = {}
    for name, args in (("demo", ()), ("own", ("--configfile", "own.yaml"))):
        run = snakemake(tmp_path, "-n", *args)
        assert run.returncode == 0, run.stdout + run.stderr
        runs[name] = planned_jobs(run.stdout)
    page_props = demo["corpora"]["wikipedia"]["page_props"]
    for name, shards, props in (("demo", 2, True), ("own", 1, False)):  # own: the schema's default, 1 shard
        wikipedia = [job for job in runs[name] if job["rule"] == "encode_shard" and "/wikipedia/" in job["output"][0]]
        assert len(wikipedia) == shards, name
        (corpus,) = [job for job in runs[name] if job["rule"] == "corpus_wikipedia"]
        assert (page_props in corpus["input"]) == props, (name, corpus)


def _written(jobs: list[dict]) -> set[str]:
    """Every output and log path of a plan's jobs (the `all` target has none)."""
    return {path for job in jobs for path in job["output"] + job["log"]}


def test_a_second_config_plans_its_own_run_beside_the_demos(tmp_path):
    """A second config never writes over the demo's outputs, so switching back reruns nothing: an
    entity list given as --configfile (alone, or over the demo's) is the run `my_list`, its outputs
    and logs under runs/my_list/; `run: x` names it; the default config, named or not, keeps results/."""
    demo = write_config(tmp_path)
    plans = {}
    mine = dict(demo, tasks={"entities": {"domain": "wikipedia", "entities": str(tmp_path / "mine.txt")}})
    (tmp_path / "mine.txt").write_text("Valdoria\n", encoding="utf-8")
    (tmp_path / "my_list.yaml").write_text(yaml.safe_dump(mine))
    (tmp_path / "named.yaml").write_text(yaml.safe_dump(dict(demo, run="x")))
    for name, args in [
        ("demo", ()),
        ("demo named", ("--configfile", "config/config.yaml")),
        ("list alone", ("--configfile", "my_list.yaml")),
        ("list over the demo", ("--configfile", "config/config.yaml", "my_list.yaml")),
        ("run: x", ("--configfile", "named.yaml")),
    ]:
        run = snakemake(tmp_path, "-n", *args)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        plans[name] = _written(planned_jobs(run.stdout))
    assert plans["demo named"] == plans["demo"]
    assert all(path.startswith(("results/", "logs/")) for path in plans["demo"])
    assert "results/tables/wikipedia/demo/table.parquet" in plans["demo"]
    for name, run in [("list alone", "my_list"), ("list over the demo", "my_list"), ("run: x", "x")]:
        assert all(path.startswith(f"runs/{run}/") for path in plans[name]), (name, plans[name])
        assert not plans[name] & plans["demo"], name
        assert f"runs/{run}/results/tables/wikipedia/demo/table.parquet" in plans[name], name
        assert f"runs/{run}/logs/tables/wikipedia/demo/merge.log" in plans[name], name


@pytest.mark.parametrize("run", ["a/b", "..", "my run"])
def test_a_run_name_that_is_no_folder_name_is_refused_in_a_line(tmp_path, run):
    config = write_config(tmp_path)
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(dict(config, run=run)))
    result = snakemake(tmp_path, "-n")
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert f"run: {run!r} is not a" in out and "Traceback" not in out, out


def test_paper_config_plans_the_authors_training_data(tmp_path):
    """`config/paper.yaml` as the authors ran it: FewRel 1.0 and 2.0 train on FewRel's train_wiki.json (which
    its download section fetches), Wiki80 1 % for 250 epochs (their README), all with their four new
    entity-marker tokens (the demo: `@` and `#`); the plan builds from the files
    its download section names and the dumps (.test/paper/data: empty stand-ins, a dry run reads none)."""
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    assert "fewrel/train_wiki.json" in paper["download"]["files"]
    shutil.copytree(PAPER_WORKDIR, tmp_path, dirs_exist_ok=True)
    run = snakemake(tmp_path, "-n", "--configfile", str(REPO / "config" / "paper.yaml"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    jobs = planned_jobs(run.stdout)
    # its own run, runs/paper/, beside the demo's results/; the downloads are shared, in data/
    shared = ("data/", "logs/download/")
    assert all(path.startswith(("runs/paper/", *shared)) for path in _written(jobs)), _written(jobs)
    assert any(path.startswith("runs/paper/results/") for path in _written(jobs))
    # a job per fine-tuned task (its rule, named after it), model and setting, writing every run's result
    fewrel = [job for job in jobs if job["rule"] in ("fewrel", "fewrel2")]
    assert {job["rule"] for job in fewrel} == {"fewrel", "fewrel2"}
    assert all(path.split("/")[4] == job["rule"] for job in fewrel for path in job["output"]), fewrel
    for job in fewrel:
        assert job["input"][0] == "data/fewrel/train_wiki.json", job
        assert not any(path.startswith("data/wiki80/") for path in job["input"]), job
    wiki80 = paper["tasks"]["wiki80"]
    assert registry.runner_options("wiki80", wiki80, "1%", 42, "baseline")["epochs"] == 250
    assert registry.runner_options("wiki80", wiki80, "10%", 42, "baseline")["epochs"] == 50
    for task in ("fewrel", "fewrel2", "wiki80"):
        setting = "5-1" if task != "wiki80" else "1%"
        assert registry.runner_options(task, paper["tasks"][task], setting, 42, "pelt")["markers"] == "tokens"
        assert "markers" not in yaml.safe_load((REPO / "config" / "config.yaml").read_text())["tasks"][task]
        # A mention without a vector: " ( <mask> )", as their FewRel loader and run_wiki80.py write it.
        assert registry.runner_options(task, paper["tasks"][task], setting, 42, "pelt")["missing"] == "mask"
    # L as the paper chose it: the LAMA sweep over its grid, 1 to 10, per model, read by the fine-tuning.
    assert not any("norm" in model for model in paper["models"]) and "norms" not in paper["tasks"]["lama"]
    sweeps = {job["output"][0] for job in jobs if job["rule"] == "lama_norm_sweep"}
    assert len(sweeps) == len(paper["models"])
    tuned = [job for job in jobs if job["rule"] in ("fewrel", "fewrel2", "wiki80")]
    assert tuned and all(any("/pelt/" in path for path in job["output"]) for job in tuned)
    assert all(any(path in sweeps for path in job["input"]) for job in tuned)


def test_mlama_config_plans_one_model_over_each_languages_table(tmp_path):
    """`config/mlama.yaml` (issue 30 item 4): each language's mLAMA task reads its language's facts
    and templates and the table of its own corpus, without and with it and its controls, and one
    summary gathers them; the release comes from its official URL, checksummed. Stand-ins for the
    release and the dumps (a dry run reads none but the task files' names)."""
    config = yaml.safe_load((REPO / "config" / "mlama.yaml").read_text())
    release = config["download"]["files"]["mLAMA/mlama1.1.zip"]
    assert release["url"] == "http://cistern.cis.lmu.de/mlama/mlama1.1.zip" and len(release["sha256"]) == 64
    languages = {name.removeprefix("mlama_"): task["domain"] for name, task in config["tasks"].items()}
    assert len(languages) >= 2 and all(config["corpora"][d]["language"] == lang for lang, d in languages.items())
    for language, domain in languages.items():
        folder = tmp_path / "data" / "mLAMA" / "release" / "mlama1.1" / language
        folder.mkdir(parents=True)
        (folder / "templates.jsonl").write_text('{"relation": "P19", "template": "[X] [Y]"}\n')
        (folder / "P19.jsonl").write_text('{"sub_label": "A", "sub_uri": "Q1", "obj_label": "B"}\n')
        for key in ("path", "page_props"):  # the dump and its QIDs, each * matching nothing
            stand_in = tmp_path / config["corpora"][domain][key].replace("*", "")
            stand_in.parent.mkdir(parents=True, exist_ok=True)
            stand_in.touch()
        assert f"{domain.replace('wiki_', '')}wiki/" in config["corpora"][domain]["page_props"]
        props = config["corpora"][domain]["page_props"].split("/", 1)[1].replace("*", "20261101")
        assert config["download"]["files"][props]["url"].endswith(props.split("/")[1])  # fetched by the download rules
    run = snakemake(tmp_path, "-n", "--configfile", str(REPO / "config" / "mlama.yaml"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    jobs = planned_jobs(run.stdout)
    mlama = [job for job in jobs if job["rule"] == "mlama"]
    planned = {tuple(job["output"][0].split("/")[4:6]) for job in mlama}
    variants = ("baseline.json", "pelt.json", "permuted.json", "random.json")
    assert planned == {(f"mlama_{lang}", "mbert") for lang in languages} and len(mlama) == len(languages) * 4
    for job in mlama:
        language = job["output"][0].split("/")[4].removeprefix("mlama_")
        assert job["output"][0].endswith(variants) and job["output"][0].startswith("runs/mlama/results/eval/")
        assert f"data/mLAMA/release/mlama1.1/{language}/templates.jsonl" in job["input"], job
        assert any(f"tables/{languages[language]}/mbert/" in path for path in job["input"]), job
        others = set(languages.values()) - {languages[language]}
        assert not any(f"tables/{d}/" in path for d in others for path in job["input"]), job
    assert (
        [job["rule"] for job in jobs].count("mlama_summary") == [job["rule"] for job in jobs].count("mlama_plot") == 1
    )


@pytest.mark.parametrize("norm", [None, 4])
def test_finetuning_norm_comes_from_the_sweep_unless_configured(tmp_path, norm):
    """Pelt FewRel / Wiki80 runs wait for the model's LAMA norm sweep exactly when the config sets no norm;
    baseline runs read no sweep, and the table for the heads' frequencies only (planned a job per run,
    `finetuning_jobs: run`). FewRel 2.0 uses the biomedical domain's table, and the schema's defaults
    (seeds 42..46) fill in what its config leaves out; the controls run on `control_seeds` where it is
    set (the demo's fewrel and wiki80). With a setting's runs in one job (the default), each job of a
    task's rule writes its setting's runs and reads what they read."""
    config = write_config(tmp_path)
    config["models"] = [{"name": "demo"} if norm is None else {"name": "demo", "norm": norm}]
    config["corpora"]["biomed"] = {"kind": "s2orc", "path": str(DEMO / "s2orc" / "demo.jsonl")}
    config["tasks"]["fewrel2"] = {
        "domain": "biomed",
        "test": str(DEMO / "fewrel" / "val_pubmed.json"),
        "exclude": str(DEMO / "fewrel" / "val_wiki.json"),
        "settings": ["5-1"],
        "train_domain": "wikipedia",
    }
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n", "--config", "finetuning_jobs=run")
    assert run.returncode == 0, run.stdout + run.stderr
    jobs = planned_jobs(run.stdout)
    runs = {job["output"][0]: job for job in jobs if job["rule"] in ("fewrel", "wiki80")}
    assert len(runs) == sum(job["rule"] in ("fewrel", "wiki80") for job in jobs)  # a job each
    every = ("baseline", "pelt", "permuted", "random", "swapped")
    tasks = config["tasks"]
    expected = {
        f"results/eval/{task}/demo/{variant}/{setting}/seed{seed}.json"
        for task, settings, seeds, control_seeds, variants in [
            ("fewrel", tasks["fewrel"]["settings"], tasks["fewrel"]["seeds"], tasks["fewrel"]["control_seeds"], every),
            # the biomedical corpus here has no kinds file: no swapped control where it is used
            ("fewrel2", ["5-1"], range(42, 47), range(42, 47), every[:4]),
            (
                "wiki80",
                list(tasks["wiki80"]["train"]),
                tasks["wiki80"]["seeds"],
                tasks["wiki80"]["control_seeds"],
                every,
            ),
        ]
        for variant in variants
        for setting in settings
        for seed in (seeds if variant in every[:2] else control_seeds)
    }
    assert len(control_seeds := tasks["fewrel"]["control_seeds"]) < len(tasks["fewrel"]["seeds"]), control_seeds
    assert set(runs) == expected
    sweep = "results/eval/lama/demo/norm_sweep.json"
    for output, job in runs.items():
        domain = "biomed" if "/fewrel2/" in output else "wikipedia"
        variant = output.split("/")[4]
        control = variant in ("permuted", "random", "swapped")
        table = f"results/tables/{domain}/demo/{f'controls/{variant}' if control else 'table'}.parquet"
        # every variant reads its table, the baseline for the heads' frequencies only; a control its control
        assert table in job["input"] and f"results/task_entities/{domain}/task_entities.parquet" in job["input"], job
        assert (sweep in job["input"]) == (variant != "baseline" and norm is None), job
        # FewRel 2.0 trains and validates with the Wikipedia table (train_domain), tests with the biomedical one
        if domain == "biomed":
            train_table = f"results/tables/wikipedia/demo/{f'controls/{variant}' if control else 'table'}.parquet"
            assert train_table in job["input"], job
            assert "results/task_entities/wikipedia/task_entities.parquet" in job["input"], job
    # LAMA: the variants that inject (pelt and its controls) take L from the sweep too; a control
    # reads its control table in place of the table
    lama = {job["output"][0]: job for job in jobs if job["rule"] == "lama"}
    assert set(lama) == {f"results/eval/lama/demo/{v}.json" for v in every}
    for output, job in lama.items():
        variant = output.rsplit("/", 1)[1].removesuffix(".json")
        assert (sweep in job["input"]) == (variant != "baseline" and norm is None), job
        control = variant in ("permuted", "random", "swapped")
        table = f"results/tables/wikipedia/demo/{f'controls/{variant}' if control else 'table'}.parquet"
        assert table in job["input"] and (control or "controls/" not in " ".join(job["input"])), job
    # FewRel 2.0 trains on the Wiki80 files (the wiki80 task's), excluding val_wiki's relations
    fewrel2 = runs["results/eval/fewrel2/demo/pelt/5-1/seed42.json"]["input"]
    assert {str(DEMO / "wiki80" / f) for f in ("train.jsonl", "dev.jsonl")} <= set(fewrel2)
    assert str(DEMO / "fewrel" / "val_wiki.json") in fewrel2
    # a setting's runs in one job: the task's rule, one job per setting, reading what its runs read
    grouped = snakemake(tmp_path, "-n")
    assert grouped.returncode == 0, grouped.stdout + grouped.stderr
    settings = {"fewrel": tasks["fewrel"]["settings"], "fewrel2": ["5-1"], "wiki80": list(tasks["wiki80"]["train"])}
    tuned = [job for job in planned_jobs(grouped.stdout) if job["rule"] in settings]
    assert sorted((job["rule"], job["output"][0].split("/")[5]) for job in tuned) == sorted(
        (task, setting) for task, names in settings.items() for setting in names
    )
    for job in tuned:
        task, setting = job["rule"], job["output"][0].split("/")[5]
        assert sorted(job["output"]) == sorted(p for p in runs if p.split("/")[2:6:3] == [task, setting])
        assert set(job["input"]) == {path for output in job["output"] for path in runs[output]["input"]}, job
    rules = {job["rule"] for job in jobs}
    assert {"corpus_s2orc", "task_entities_by_name", "finetuning_summary"} <= rules
    summaries = {job["output"][-1] for job in jobs if job["rule"] == "finetuning_summary"}
    assert summaries == {"results/eval/summary/fewrel.html", "results/eval/summary/wiki80.html"}


def _demo_dump_counts() -> tuple[int, int]:
    """Articles and redirects of the main namespace, read directly from the XML."""
    articles = redirects = 0
    with bz2.open(DEMO / "wikipedia" / "demo-pages-articles.xml.bz2") as f:
        for _, elem in ET.iterparse(f):
            if elem.tag.endswith("}page"):
                ns = next(c.text for c in elem if c.tag.endswith("}ns"))
                if ns == "0":
                    if any(c.tag.endswith("}redirect") for c in elem):
                        redirects += 1
                    else:
                        articles += 1
                elem.clear()
    return articles, redirects


def test_demo_end_to_end(finished, tmp_path):
    """The whole DAG on the demo (the session's finished run), a second run that has nothing to
    do, and the HTML report."""
    config = yaml.safe_load((finished / "config" / "config.yaml").read_text())
    results = finished / "results"

    articles, redirects = _demo_dump_counts()
    documents = pq.read_table(finished / CORPUS_FILE / "documents").to_pylist()
    assert len(documents) == articles >= 40
    pages = pq.read_table(finished / CORPUS_FILE / "pages").to_pylist()
    assert sum(p["is_redirect"] for p in pages) == redirects > 0
    for doc in documents:
        assert "[[" not in doc["text"] and "{{" not in doc["text"]
        for link in doc["links"]:
            assert 0 <= link["start"] < link["end"] <= len(doc["text"])

    mentions = pq.read_table(results / "linking" / "wikipedia" / "mentions").to_pylist()
    methods = {m["method"] for m in mentions}
    assert {"anchor", "heuristic"} <= methods
    for m in mentions:
        assert 0 <= m["start"] < m["end"] <= len(m["sentence"])

    resolved = pq.read_table(results / "task_entities" / "wikipedia" / "task_entities.parquet").to_pylist()
    wanted = {r["entity_id"] for r in resolved if r["entity_id"] is not None}
    assert wanted, "no task entity was found in the demo corpus"

    cap = config["sampling"]["max_sentences_per_entity"]
    table = pq.read_table(results / "tables" / "wikipedia" / "demo" / "table.parquet")
    rows = table.to_pylist()
    assert rows and {r["entity_id"] for r in rows} <= wanted
    hidden = json.loads((results / "models" / "demo" / "config.json").read_text())["hidden_size"]
    for row in rows:
        assert len(row["vector_sum"]) == hidden
        assert 1 <= row["n_sentences"] <= min(cap, row["frequency"])
    # The ids users have: each article's QID (the demo's page_props) and its aliases, from the linking stage
    qids = {p["title"]: p["qid"] for p in pages if not p["is_redirect"] and p["qid"]}
    assert [r["qid"] for r in rows] == [qids.get(r["entity_id"]) for r in rows] and any(r["qid"] for r in rows)
    with_qid = next(r for r in rows if r["qid"])
    assert (
        EntityTable.open(results / "tables" / "wikipedia" / "demo" / "table.parquet").find(
            [with_qid["qid"], with_qid["entity_id"].lower()], ignore_case=True
        )
        == [with_qid["entity_id"]] * 2
    )
    table_meta = EntityTable.open(results / "tables" / "wikipedia" / "demo" / "table.parquet").metadata
    assert (table_meta["corpus"], table_meta["language"]) == ("wikipedia", "en")  # the dump's xml:lang
    biomed = EntityTable.open(results / "tables" / "biomed" / "demo" / "table.parquet").metadata
    assert biomed["language"] == "en" and (table_meta["corpus_kind"], biomed["corpus_kind"]) == ("wikipedia", "s2orc")
    assert corpus_license(biomed) == "odc-by"  # a Hub card of the biomedical table names S2ORC's licence

    scores = {}
    for variant in ("baseline", "pelt"):
        result = json.loads((results / "eval" / "lama" / "demo" / f"{variant}.json").read_text())
        assert result["variant"] == variant
        scores[variant] = result
    # Google-RE and T-REx columns, and LAMA-UHN: the string filter alone in the demo (the demo model as the
    # person-name filter's model would remove the facts it knows, the frequent subjects': config/README.md)
    uhn = json.loads((results / "eval" / "lama" / "uhn.json").read_text())
    assert uhn["person_model"] is None and uhn["counts"]["facts"] > 0
    assert set(uhn["dropped"].values()) <= {"object_in_subject"}
    for result in scores.values():
        benchmarks = result["benchmarks"]
        assert {"G-RE", "T-REx", "UHN G-RE", "UHN T-REx"} <= set(benchmarks)
        assert sum(benchmarks[b]["facts"] for b in ("G-RE", "T-REx")) == result["counts"]["facts_evaluated"]
        n_uhn = sum(benchmarks[b]["facts"] for b in ("UHN G-RE", "UHN T-REx"))
        assert n_uhn == result["counts"]["facts_evaluated"] - result["counts"]["not_in_uhn"]
    summary = (results / "eval" / "summary" / "lama.md").read_text()
    assert (
        "baseline" in summary
        and "pelt" in summary
        and "| UHN T-REx P@1 macro over relations (as the paper) |" in summary
    )
    assert "| P@1 per fact (as the paper) | P@1 macro over relations (ours) |" in summary  # Table 5's buckets
    assert (results / "eval" / "summary" / "lama.csv").read_text().count("\n") >= 3
    with open(results / "eval" / "report" / "coverage.csv", newline="") as fh:
        (coverage,) = [row for row in csv.DictReader(fh) if row["domain"] == "wikipedia"]
    assert int(coverage["entities_in_table"]) == len(rows) and int(coverage["wanted"]) >= len(wanted)

    sweep = json.loads((results / "eval" / "lama" / "demo" / "norm_sweep.json").read_text())
    norms = config["tasks"]["lama"].get("norms", list(range(1, 11)))
    assert [entry["norm"] for entry in sweep["norms"]] == norms
    assert sweep["chosen_norm"] in norms
    assert "demo" in (results / "eval" / "summary" / "norm_sweep.md").read_text()

    _check_finetuning_results(results, config)

    again = snakemake(finished, "--cores", "2", "-n")
    assert again.returncode == 0, again.stderr
    assert "Nothing to be done" in again.stdout + again.stderr
    # the run's last lines name every table it wrote (pelt.registry.TaskKind.end_of_run adds a list's)
    tables = sorted(f"table: {p.relative_to(finished)}" for p in (results / "tables").glob("*/*/table.parquet"))
    assert json.loads((finished / "kill.json").read_text())["end_of_run"] == tables and len(tables) == 2

    report = snakemake(finished, "--report", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stdout[-3000:] + report.stderr[-3000:]
    html = (tmp_path / "report.html").read_text()
    check_report(html, results)
    # Snakemake 9's report labels name each item by its page and kind, not its file name; a
    # wildcard's value fills the label of the summaries written per task
    for label in ('"page": "headline"', '"page": "linking coverage"', '"page": "fewrel"', '"kind": "figure"'):
        assert label in html, label
    # The input-quality table, embedded: the demo's articles as the corpus counted them, and a skip
    # it has (a task entity that no sentence mentions), highlighted.
    quality = report_files(html)["input_quality.html"]
    source = config["corpora"]["wikipedia"]["path"]
    assert f"<td>corpus_wikipedia</td><td>{source}</td><td>articles</td><td>{articles}</td>" in quality
    assert (
        '<tr class="skipped"><td>wikipedia</td><td>sample_mentions</td><td></td><td>wanted_without_mentions</td>'
        "<td>1</td>" in quality
    )


VARIANTS = ("baseline", "pelt")
LAMA_VARIANTS = (*VARIANTS, "permuted", "random", "swapped")


def report_files(html: str) -> dict[str, str]:
    """The files a built report embeds (each a base64 data URI named by its file name), decoded."""
    embedded = re.findall(r"filename=([\w.-]+);base64,([A-Za-z0-9+/=]+)", html)
    return {name: base64.b64decode(data).decode() for name, data in embedded if name != "logo.svg"}


def check_report(html: str, results: Path) -> None:
    """The built report shows every summary as an HTML table and every figure, with the run's numbers:
    the landing page has the headline table; each number below is read from the per-run JSON files."""
    files = report_files(html)
    tables = {"headline", "lama", "norm_sweep", "fewrel", "wiki80", "coverage", "input_quality"}
    figures = {"lama_buckets", "norm_sweep", "fewrel", "wiki80", "coverage", "frequencies", "stage_times"}
    assert set(files) == {f"{t}.html" for t in tables} | {f"{f}.svg" for f in figures}
    svg_text = {name: "\n".join(svg_texts_of(text)) for name, text in files.items() if name.endswith(".svg")}
    lama = {v: json.loads((results / "eval" / "lama" / "demo" / f"{v}.json").read_text()) for v in LAMA_VARIANTS}
    trex = ["LAMA T-REx P@1 macro over relations (as the paper)"]
    trex += [f"{100 * lama[v]['benchmarks']['T-REx']['macro_p_at_1']:.1f}" for v in VARIANTS]
    # the landing page: the headline page's table, inline (not a link)
    for page in (html.replace('\\"', '"'), files["headline.html"]):
        assert trex in [row[:3] for row in html_rows(page)]
    lama_rows = html_rows(files["lama.html"])
    for variant in LAMA_VARIANTS:
        assert ["demo", variant] in [row[:2] for row in lama_rows]
        rare = lama[variant]["buckets"]["[0,10)"]  # the bars: P@1 per fact, as the paper's Table 5
        assert f"{100 * (rare['correct'] / rare['facts']):.1f}" in svg_text["lama_buckets.svg"].split("\n")
    sweep = json.loads((results / "eval" / "lama" / "demo" / "norm_sweep.json").read_text())
    assert f"chosen L = {sweep['chosen_norm']:g}" in svg_text["norm_sweep.svg"]
    assert html_rows(files["norm_sweep.html"])[1][-2] == f"{sweep['chosen_norm']:g}"
    for summary in ("fewrel", "wiki80"):
        with open(results / "eval" / "summary" / f"{summary}.csv", newline="") as fh:
            means = [f"{100 * float(r['accuracy_mean']):.1f}" for r in csv.DictReader(fh)]
        assert all(m in svg_text[f"{summary}.svg"].split("\n") for m in means)
        cells = {cell.split(" ± ")[0] for row in html_rows(files[f"{summary}.html"]) for cell in row}
        assert set(means) <= cells
    with open(results / "eval" / "report" / "coverage.csv", newline="") as fh:
        coverage_rows = list(csv.DictReader(fh))
    assert [row["domain"] for row in coverage_rows] == ["biomed", "wikipedia"]  # one row per domain
    coverage_page = html_rows(files["coverage.html"])
    assert coverage_page[1 : 1 + len(coverage_rows)] == [list(row.values()) for row in coverage_rows]
    # then the names that found no entity, each with the closest entities the corpus has
    not_found = coverage_page[1 + len(coverage_rows) :]
    assert not_found[0] == ["domain", "name", "closest entities"]
    resolved = pq.read_table(results / "task_entities" / "wikipedia" / "task_entities.parquet").to_pylist()
    missing = sorted(r["name"] for r in resolved if r["entity_id"] is None)
    assert sorted(row[1] for row in not_found[1:] if row[0] == "wikipedia") == missing
    (coverage,) = [row for row in coverage_rows if row["domain"] == "wikipedia"]
    assert coverage["names_in_table"] in svg_text["coverage.svg"].split("\n")
    entities = pq.read_table(results / "samples" / "wikipedia" / "frequencies").num_rows
    assert f"wikipedia: {entities} entities" in svg_text["frequencies.svg"]
    assert {"corpus", "linking", "models", "tables", "eval/lama"} <= set(svg_text["stage_times.svg"].split("\n"))


def svg_texts_of(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]


def _check_finetuning_results(results: Path, config: dict) -> None:
    """The demo's FewRel 1.0 and 2.0 and Wiki80 runs: one result per variant, setting and seed, and
    summaries that hold them (FewRel 2.0 in FewRel's, as the paper's Table 2)."""
    tasks = config["tasks"]
    wiki80 = tasks["wiki80"]
    chosen_norm = json.loads((results / "eval" / "lama" / "demo" / "norm_sweep.json").read_text())["chosen_norm"]
    assert wiki80["epochs"]["100%"] > 1
    dev_size = len((DEMO / "wiki80" / "dev.jsonl").read_text().splitlines())
    runs = {}
    for task, settings in [
        ("fewrel", tasks["fewrel"]["settings"]),
        ("fewrel2", tasks["fewrel2"]["settings"]),
        ("wiki80", list(wiki80["train"])),
    ]:
        for variant in ("baseline", "pelt", "permuted", "random", "swapped"):
            control = variant not in ("baseline", "pelt")
            seeds = tasks[task].get("control_seeds", tasks[task]["seeds"]) if control else tasks[task]["seeds"]
            for setting in settings:
                for seed in seeds:
                    path = results / "eval" / task / "demo" / variant / setting / f"seed{seed}.json"
                    result = json.loads(path.read_text())
                    assert (result["task"], result["variant"], result["setting"], result["seed"]) == (
                        "wiki80" if task == "wiki80" else "fewrel",
                        variant,
                        setting,
                        seed,
                    )
                    assert 0.0 <= result["accuracy"] <= 1.0
                    evaluated = result["entities"]["eval" if task == "wiki80" else "test"]
                    # pelt and the controls inject the demo table's entities (or the control's vectors) with the
                    # L of the LAMA sweep; the baseline none. Every variant is split by the heads' frequency
                    assert (evaluated["injected"] > 0, result["norm"]) == (
                        (True, chosen_norm) if variant != "baseline" else (False, None)
                    )
                    assert sum(group["n"] for group in result["by_head"].values()) == result.get(
                        "n_queries", result["n"]
                    )
                    runs[task, variant, setting, seed] = result
    for (task, variant, setting, seed), result in runs.items():
        if task != "wiki80":
            # trained on relations that are neither tested nor validated on, selected on validation relations
            # of their own; FewRel 2.0's test entities get the biomedical table's vectors (above: injected)
            fewrel = tasks[task]
            data = result["data"]
            assert result["dataset"] == {"fewrel": "fewrel1"}.get(task, task)
            assert result["hyperparameters"]["steps"] == fewrel["steps"] > 0
            test_relations = len(json.loads(Path(fewrel["test"]).read_text()))  # the demo: ten, FewRel 2.0 five
            assert data["validation_source"] == "given" and data["test_relations"] == test_relations >= 5
            assert data["train_relations"] >= 5 and len(data["validation_relations"]) >= 5
            assert result["validation"]["best_step"] in range(
                fewrel["eval_every"], fewrel["steps"] + 1, fewrel["eval_every"]
            )
            assert result["n"] == fewrel["test_episodes"]
            n_way = int(setting.split("-")[0])
            assert result["n_queries"] == n_way * result["hyperparameters"]["n_query"] * result["n"]
            assert round(result["accuracy"] * result["n_queries"], 6).is_integer()
        else:
            assert result["n"] == dev_size and round(result["accuracy"] * dev_size, 6).is_integer()
            assert result["hyperparameters"]["epochs"] == wiki80["epochs"][setting]
    benchmarks = {"fewrel": ("fewrel", "fewrel1"), "fewrel2": ("fewrel", "fewrel2"), "wiki80": ("wiki80", "wiki80")}
    names = {"fewrel": "FewRel 1.0", "fewrel2": "FewRel 2.0", "wiki80": "Wiki80"}
    for task, (summary, benchmark) in benchmarks.items():
        with open(results / "eval" / "summary" / f"{summary}.csv", newline="") as fh:
            rows = [row for row in csv.DictReader(fh) if row["benchmark"] == benchmark]
        mine = {key[1:3]: r for key, r in runs.items() if key[0] == task}
        assert {(row["variant"], row["setting"]) for row in rows} == set(mine)
        for row in rows:
            assert float(row["accuracy_mean"]) == pytest.approx(mine[row["variant"], row["setting"]]["accuracy"])
            assert row["seeds"] == "42" and row["n_seeds"] == "1"
        md = (results / "eval" / "summary" / f"{summary}.md").read_text()
        assert all(f"{names[task]} {setting}" in md for _, setting in mine)
        assert "| baseline |" in md and "| pelt |" in md
        assert "| Benchmark | Setting | Relation |" in md  # each relation, and where its errors went


def test_s2orc_domain_is_linked_by_string_matching(tmp_path):
    """A task on an S2ORC corpus: S2ORC parsing, task entities by name, string linking."""
    config = write_config(tmp_path)
    config["corpora"] = {"biomed": {"kind": "s2orc", "path": str(DEMO / "s2orc" / "demo.jsonl")}}
    config["tasks"] = {"lama": dict(config["tasks"]["lama"], domain="biomed")}  # the demo's other tasks need wikipedia
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n", "results/samples/biomed/sentences")
    assert run.returncode == 0, run.stdout + run.stderr
    jobs = {
        line.split()[-1].rstrip(":") for line in run.stdout.splitlines() if line.startswith(("rule ", "localrule "))
    }
    assert jobs == {"corpus_s2orc", "task_entities_by_name", "link_strings", "sample_mentions"}, run.stdout


def test_an_entity_list_alone_builds_its_table_and_no_task_is_an_error(tmp_path):
    """The default target of a config whose only task is an entity list is that domain's table (and
    the input-quality, coverage, frequency and stage-time reports), no evaluation, and a landing page
    naming the tables and the list's misses (pelt.report.outcome); a
    config with no task has nothing to build on demand and says so in a line; `sampling.entities:
    all` builds every corpus's table without a task."""
    config = write_config(tmp_path)
    (tmp_path / "mine.txt").write_text("Valdoria\nQ990000002\n", encoding="utf-8")
    config["tasks"] = {"entities": {"domain": "wikipedia", "entities": str(tmp_path / "mine.txt")}}
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode == 0, run.stdout + run.stderr
    jobs = {job["rule"]: job for job in planned_jobs(run.stdout)}
    assert set(jobs) == {
        *("corpus_wikipedia", "link_wikipedia", "task_entities", "sample_mentions", "demo_model"),
        *("entity_ids", "encode_shard", "entity_table", "coverage", "input_quality", "all"),
        *("coverage_plot", "frequency_plot", "stage_times_plot", "headline"),
    }, sorted(jobs)
    assert "results/task_entities/wikipedia/counts.json" in jobs["headline"]["input"]
    assert "results/tables/wikipedia/demo/table.parquet" in jobs["all"]["input"]
    assert str(tmp_path / "mine.txt") in jobs["task_entities"]["input"]  # an edited list reruns it
    assert "results/linking/wikipedia/ids" in jobs["entity_table"]["input"]  # the table gets QIDs and aliases

    config["tasks"] = {}
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert "tasks: none names an entity, so no table would be built" in out and "Traceback" not in out, out

    config["sampling"]["entities"] = "all"
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode == 0, run.stdout + run.stderr
    jobs = {job["rule"]: job for job in planned_jobs(run.stdout)}
    assert "coverage" not in jobs and "results/tables/wikipedia/demo/table.parquet" in jobs["all"]["input"]
    assert "frequency_plot" in jobs and "results/tables/wikipedia/demo/table.parquet" in jobs["headline"]["input"]


def test_a_machine_without_java_is_refused_in_a_line_before_any_job(tmp_path):
    """The corpus stage runs on Spark: without Java the run stops when it starts, before any job, in
    one line naming what to install (not the forty lines of a failed Spark gateway in a job's log);
    a dry run still plans."""
    import os

    write_config(tmp_path)
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-jdk")}
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path)]
    run = subprocess.run([*command, "--cores", "1"], capture_output=True, text=True, cwd=tmp_path, env=env)
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "this machine lacks what the run needs:" in out, out[-3000:]
    assert "Java not found (JAVA_HOME=" in out and "openjdk-17" in out and "Traceback" not in out
    assert not (tmp_path / "results").exists() and not (tmp_path / "logs").exists()  # no job started
    planned = subprocess.run([*command, "-n"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert planned.returncode == 0, planned.stderr[-3000:]


def test_pelt_init_entities_writes_a_config_that_takes_the_shipped_model(tmp_path, monkeypatch, capsys):
    """`pelt init entities LIST`: the demo's corpus and shipped model (so no 10-20 minute training), one
    entity list, nothing evaluated; the plan builds the list's table and its demo_model job takes the
    shipped model."""
    from pelt.cli import main as pelt_main

    entities = tmp_path / "mine.txt"
    entities.write_text("Heireith\nQ42\n")
    monkeypatch.chdir(tmp_path)
    assert pelt_main(["init", "entities", str(entities)]) == 0
    assert "mine.yaml written" in capsys.readouterr().out
    assert pelt_main(["init", "entities", str(entities)]) == 1  # no silent overwrite
    assert "exists" in capsys.readouterr().err
    written = yaml.safe_load((tmp_path / "mine.yaml").read_text())
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert written["demo_model"] == demo["demo_model"] and list(written["tasks"]) == ["entities"]
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(absolute(written)))
    run = snakemake(tmp_path, "-n", "--configfile", "mine.yaml")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    jobs = planned_jobs(run.stdout)
    (model,) = [job for job in jobs if job["rule"] == "demo_model"]
    assert str(REPO / "resources" / "demo" / "model") in model["input"]
    assert "runs/mine/results/tables/wikipedia/demo/table.parquet" in _written(jobs)
    assert not any(job["rule"] in ("lama", "fewrel", "wiki80") for job in jobs)
