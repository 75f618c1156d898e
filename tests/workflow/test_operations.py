"""Operating pelt at scale: the SLURM profile, a real Spark cluster, kills mid-job and a second run
from the same inputs (both give the first run's table), bad input, and guards on the code (what
reruns after a change: test_reruns.py).

One demo run (the session fixture ``finished`` of tests/demo_run.py) serves every test that needs finished outputs;
tests that change files work on a copy of it (``copy_of``).
"""

from __future__ import annotations

import bz2
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import REPO
from demo_run import (
    CORPUS_FILE,
    DEMO,
    DOCUMENTS,
    DUMP,
    ENCODING,
    JOB,
    LINKING,
    SHARD,
    SNAKEMAKE,
    TABLE,
    copy_of,
    jobs_of,
    kill_when,
    planned,
    planned_jobs,
    snakemake,
    sorted_rows,
    start_snakemake,
    table_rows,
    unlock_after_kill,
    wait_for,
    write_config,
    write_dump,
)

from pelt import registry
from pelt.corpus.s2orc import build_s2orc_corpus
from pelt.corpus.wikipedia.build import build_wikipedia_corpus
from pelt.corpus.wikipedia.dump import iter_dump_pages
from pelt.linking.link import link_by_string, link_wikipedia

PAGE_PROPS = DEMO / "wikipedia" / "demo-page_props.sql.gz"
SPARK_RULES = {"corpus_wikipedia", "link_wikipedia", "entity_ids", "task_entities", "sample_mentions"}
GPU_RULES = {"encode_shard", "lama", "lama_norm_sweep"}


# --- 1. The SLURM profile ---------------------------------------------------------------------


def _job_resources(output: str) -> list[tuple[str, int, dict[str, str]]]:
    """(rule, threads, resources) of each job block of a dry run."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:\n)", output):
        head = JOB.match(block)
        if head is None:
            continue
        threads = re.search(r"^\s+threads: (\d+)$", block, re.M)
        resources = re.search(r"^\s+resources: (.*)$", block, re.M)
        pairs = dict(item.split("=", 1) for item in resources.group(1).split(", ")) if resources else {}
        jobs.append((head.group(1), int(threads.group(1)) if threads else 1, pairs))
    return jobs


def test_slurm_profile_names_real_rules_and_sizes_every_job(tmp_path):
    """Dry run under profiles/slurm: the GPU rules (those the workflow marks gpu=1) ask for a GPU and
    memory, Spark rules get as many CPUs as their local[threads] uses and memory above the Spark
    driver's, and every rule the profile names exists (a renamed rule would silently lose its
    resources)."""
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    write_config(tmp_path)
    rules = snakemake(tmp_path, "--list-rules")
    assert rules.returncode == 0, rules.stderr
    named = set(profile["set-threads"]) | set(profile["set-resources"])
    assert named <= set(rules.stdout.split()), named - set(rules.stdout.split())

    gpu = re.compile(r"^\s+resources:\n(?:\s+\w+=.*\n)*\s+gpu=1,", re.M)
    declared_gpu = {
        rule
        for path in (REPO / "workflow" / "rules").rglob("*.smk")
        for rule, body in re.findall(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", path.read_text(), re.M)
        if gpu.search(body)
    }
    # the fine-tuning kinds' rules, one per kind named after it, from one template
    if gpu.search((REPO / registry.FINETUNING_RULES).read_text()):
        declared_gpu |= {kind.name for kind in registry.kinds_with_rules(registry.FINETUNING_RULES)}
    assert GPU_RULES <= declared_gpu
    for rule in declared_gpu:  # in the demo's DAG or not
        assert profile["set-resources"][rule]["gpu"] == 1 and profile["set-resources"][rule]["mem_mb"] >= 16000

    # --cores only lifts the dry run's cap of 1 thread: a SLURM run has no cap on a job's threads.
    run = snakemake(tmp_path, "-n", "--workflow-profile", str(REPO / "profiles" / "slurm"), "--cores", "1000")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    jobs = _job_resources(run.stdout)
    assert {rule for rule, _, _ in jobs} >= SPARK_RULES | GPU_RULES | {"entity_table"}
    assert {rule for rule, _, res in jobs if "gpu" in res} == declared_gpu & {rule for rule, _, _ in jobs}
    for rule, threads, res in jobs:
        if rule == "all":
            continue
        assert int(res["mem_mb"]) >= 8000 and int(res["runtime"]) >= 60, (rule, res)
        # The plugin asks for cpus_per_task when set, else threads: they must not disagree.
        assert int(res.get("cpus_per_task", threads)) == threads, (rule, threads, res)
        if rule in declared_gpu:
            assert int(res["mem_mb"]) >= 16000, (rule, res)
        if rule in SPARK_RULES:
            assert threads >= 8 and int(res["mem_mb"]) >= 32000, (rule, threads, res)
    # A job per fine-tuning run (the profile's `finetuning_jobs: run`): a setting's runs on as many GPUs
    tuned = [job for job in planned_jobs(run.stdout) if job["rule"] in ("fewrel", "wiki80")]
    assert len(tuned) == 54 and all(len(job["output"]) == 1 for job in tuned), tuned  # the demo's runs
    # The paper's Spark driver (config/paper.yaml) fits in every Spark job's allocation.
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())["spark"]["driver_memory"]
    driver_mb = int(paper[:-1]) * {"m": 1, "g": 1024}[paper[-1]]
    for rule in SPARK_RULES:
        assert driver_mb < profile["set-resources"][rule]["mem_mb"], rule


FAKE_SLURM = {
    # Records what pelt would submit, and refuses it: nothing runs on a cluster that is not there.
    "sbatch": 'echo "$@" >> "$FAKE_SLURM_LOG"; echo "sbatch: error: no cluster here" >&2; exit 1',
    # What the plugin asks before it submits: the user's account and the partitions.
    "sacct": "echo acct",
    "sacctmgr": "echo acct",
    "sinfo": 'echo "main*"',
}


def test_slurm_submissions_and_local_rules(finished, tmp_path):
    """With stand-in SLURM commands: what sbatch receives for a GPU and a Spark job, and the
    summaries run on the submitting node without sbatch."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKE_SLURM.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "sbatch.log"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FAKE_SLURM_LOG=str(log))
    work = copy_of(finished, tmp_path / "work")

    def submit(*targets: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                *SNAKEMAKE,
                "--snakefile",
                str(REPO / "Snakefile"),
                "--directory",
                str(work),
                "--workflow-profile",
                str(REPO / "profiles" / "slurm"),
                "--slurm-init-seconds-before-status-checks",
                "1",
                "--force",
                *targets,
            ],
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=300,
        )

    local = submit("results/eval/summary/lama.csv", "results/eval/summary/norm_sweep.csv")
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]
    assert jobs_of(local.stdout + local.stderr) == {"lama_summary": 1, "norm_sweep_summary": 1}
    assert "localrule lama_summary:" in local.stdout + local.stderr
    assert not log.exists(), log.read_text()

    calls = {}
    for rule, target in [("encode_shard", SHARD.format(0)), ("corpus_wikipedia", DOCUMENTS)]:
        run = submit(target)
        assert run.returncode != 0 and "no cluster here" in run.stdout + run.stderr, run.stderr[-3000:]
        calls[rule] = log.read_text().splitlines()[-1]
    assert len(log.read_text().splitlines()) == 2
    shard, corpus = calls["encode_shard"], calls["corpus_wikipedia"]
    assert "--gpus=1" in shard and "--mem 32000" in shard and "--cpus-per-task=8" in shard, shard
    assert "--gpus" not in corpus and "--mem 64000" in corpus and "--cpus-per-task=16" in corpus, corpus
    assert "-t 360" in corpus and "-t 240" in shard


def test_a_cluster_run_of_a_setting_a_job_says_how_to_spread_it(tmp_path):
    """Jobs that go to SLURM with a setting's fine-tuning runs in one job (`finetuning_jobs: setting`,
    here as a --config on the command line that replaces the profile's) run each setting's runs in
    series on one GPU: the run says so when it starts, and how to spread them; under the profile
    alone it does not, nor on one machine (a local run, `--touch`: its start without the work). The
    target, the demo model, is refused by the stand-in sbatch."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKE_SLURM.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FAKE_SLURM_LOG=str(tmp_path / "log"))
    write_config(tmp_path)
    profile = ("--workflow-profile", str(REPO / "profiles" / "slurm"), "--slurm-init-seconds-before-status-checks", "1")
    said = {}
    for mode, args in [
        ("profile", profile),
        ("setting", ("--config", "finetuning_jobs=setting", *profile)),
        ("local", ("--touch", "--cores", "1")),
    ]:
        run = subprocess.run(
            [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path), *args]
            + ["results/models/demo"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=300,
        )
        refused = run.returncode != 0 and "no cluster here" in run.stdout + run.stderr
        assert refused == (mode != "local"), run.stdout[-3000:] + run.stderr[-3000:]
        said[mode] = "finetuning_jobs: setting - each fine-tuning job runs" in run.stdout + run.stderr
    assert said == {"profile": False, "setting": True, "local": False}


# --- 2. A real Spark cluster ------------------------------------------------------------------

CLUSTER_JOB = """
import json, sys
from pelt.corpus.wikipedia.build import build_wikipedia_corpus
from pelt.linking.link import LinkSettings, link_wikipedia
from pelt.spark import get_spark

master, dump, page_props, out, linking = sys.argv[1:]
spark = get_spark(master, app_name="pelt-cluster-test", driver_memory="1g", shuffle_partitions=4)
build_wikipedia_corpus(spark, [dump], f"{out}/documents", f"{out}/pages", page_props=[page_props])
settings = LinkSettings.from_config(json.loads(linking))
link_wikipedia(spark, f"{out}/documents", f"{out}/pages", f"{out}/aliases", f"{out}/mentions", settings)
executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()  # the driver counts as one
print(json.dumps({"master": spark.sparkContext.master, "executors": executors}))
spark.stop()
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def spark_cluster(tmp_path):
    """A Spark standalone master and one worker (2 cores, 1 GB) on loopback, from pyspark's jars."""
    import pyspark

    home = Path(pyspark.__file__).parent
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_SCALA_VERSION="2.13")
    java = [shutil.which("java") or "java", "-Xmx256m", "-cp", f"{home}/jars/*"]
    port, work = _free_port(), tmp_path / "worker"
    work.mkdir()
    master = f"spark://127.0.0.1:{port}"
    daemons = []

    def start(name: str, *args: str) -> Path:
        log = tmp_path / f"{name}.log"
        with log.open("w") as out:
            daemons.append(
                subprocess.Popen(
                    [*java, f"org.apache.spark.deploy.{name}", *args],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                )
            )
        return log

    try:
        master_log = start(
            "master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(_free_port())
        )
        start(
            "worker.Worker",
            master,
            "--host",
            "127.0.0.1",
            "--cores",
            "2",
            "--memory",
            "1g",
            "--webui-port",
            str(_free_port()),
            "--work-dir",
            str(work),
        )
        wait_for(lambda: "Registering worker" in master_log.read_text(), 120, "the worker to register", daemons)
        yield master, work
    finally:
        for daemon in daemons:  # the worker's process group holds the executors it launched
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()


def test_corpus_and_linking_on_a_spark_cluster_equal_a_local_run(finished, spark_cluster, tmp_path):
    """build_wikipedia_corpus and link_wikipedia through spark://: the same rows as the local[2]
    run of the workflow, computed by the worker's executor (a separate JVM and Python workers)."""
    master, worker_dir = spark_cluster
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-c", CLUSTER_JOB, master, str(DUMP), str(PAGE_PROPS), str(out), json.dumps(LINKING)],
        capture_output=True,
        text=True,
        timeout=480,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report == {"master": master, "executors": 2}
    executor_logs = list(worker_dir.glob("app-*/*/stderr"))
    assert executor_logs and sum(log.read_text().count("Running task") for log in executor_logs) > 10
    linking = "results/linking/wikipedia"
    for folder, part in [
        (CORPUS_FILE, "documents"),
        (CORPUS_FILE, "pages"),
        (linking, "aliases"),
        (linking, "mentions"),
    ]:
        local = finished / folder / part
        assert pq.read_schema(next(local.glob("*.parquet"))) == pq.read_schema(next((out / part).glob("*.parquet")))
        assert sorted_rows(out / part) == sorted_rows(local), part


# --- 3. Kills, and a second run ---------------------------------------------------------------------------------


def test_killed_encoding_resumes_from_finished_shards(finished, tmp_path):
    """kill -9 of Snakemake and its jobs while a shard job runs: the shard is not taken as done (not
    even when a half-written file is left at its path), the rerun encodes that shard only, and the
    table equals the uninterrupted run's; the re-encoded shard is bit for bit the same."""
    work = copy_of(finished, tmp_path / "work")
    missing = work / SHARD.format(1)
    log = work / "logs" / "tables" / "wikipedia" / "demo" / "shard-1-of-2.log"
    for path in (missing, missing.with_suffix(".arrow"), work / TABLE, (work / TABLE).with_suffix(".arrow"), log):
        path.unlink()
    shutil.rmtree(work / "results" / "tables" / "wikipedia" / "demo" / "cache")  # really encode it again

    out = tmp_path / "killed.out"
    proc = start_snakemake(work, out, "--cores", "2", TABLE)
    # The job opens its log first thing (Snakemake removed the old one): killed then, it is under way
    # (importing torch, loading the model) and far from writing its table.
    kill_when(proc, log.exists, "the shard job to start")
    assert jobs_of(out.read_text()) == {"encode_shard": 1}
    assert "Finished" not in out.read_text() and not missing.exists()
    # pelt writes tables atomically; a writer that did not would leave a file like this one.
    missing.write_bytes((finished / SHARD.format(1)).read_bytes()[:1000])
    assert planned(work, TABLE) == {"encode_shard": 1, "entity_table": 1}

    unlock_after_kill(work, TABLE)
    rerun = snakemake(work, "--cores", "2", TABLE)
    output = rerun.stdout + rerun.stderr
    assert rerun.returncode == 0, output[-5000:]
    assert jobs_of(output) == {"encode_shard": 1, "entity_table": 1}
    assert "shard=1" in output and "shard=0" not in output

    shard_again, shard_first = table_rows(missing), table_rows(finished / SHARD.format(1))
    assert shard_again.keys() == shard_first.keys()
    for entity, row in shard_again.items():
        assert np.array_equal(row["vector_sum"], shard_first[entity]["vector_sum"]), entity
    again, first = table_rows(work / TABLE), table_rows(finished / TABLE)
    assert again.keys() == first.keys()
    for entity, row in again.items():
        assert (row["n_sentences"], row["frequency"]) == (first[entity]["n_sentences"], first[entity]["frequency"])
        np.testing.assert_allclose(row["vector_sum"], first[entity]["vector_sum"], rtol=0, atol=1e-6)


def test_a_second_run_from_the_same_inputs_gives_identical_samples_and_table(finished, tmp_path):
    """Sampling (Spark) and encoding run again on the same linked corpus with the same seed, the
    encoding cache removed so that every entity is encoded anew: the sampled sentences, the
    frequencies and the table are those of the first run, bit for bit."""
    work = copy_of(finished, tmp_path / "work")
    shutil.rmtree(work / "results" / "tables" / "wikipedia" / "demo" / "cache")
    run = snakemake(work, "--cores", "2", TABLE, "--forcerun", "sample_mentions")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-5000:]
    assert jobs_of(output) == {"sample_mentions": 1, **ENCODING}
    for stage in ("sentences", "frequencies"):
        path = Path("results") / "samples" / "wikipedia" / stage
        assert sorted_rows(work / path) == sorted_rows(finished / path), stage
    again, first = table_rows(work / TABLE), table_rows(finished / TABLE)
    assert again.keys() == first.keys() and len(first) > 10
    for entity, row in again.items():
        assert (row["n_sentences"], row["frequency"]) == (first[entity]["n_sentences"], first[entity]["frequency"])
        assert np.array_equal(row["vector_sum"], first[entity]["vector_sum"]), entity


def test_killed_spark_stage_is_redone(finished):
    """The fixture's run, killed while Spark wrote documents/: the half-written directory was not
    taken as done, the resumed run redid the corpus stage once, and documents/ holds every article of
    the dump once."""
    kill = json.loads((finished / "kill.json").read_text())
    assert kill["ran"] == {"corpus_wikipedia": 1} and not kill["finished"]
    assert f"{DOCUMENTS}/_temporary" in kill["left"] and f"{DOCUMENTS}/_SUCCESS" not in kill["left"]
    assert kill["planned"] == {"corpus_wikipedia": 1}
    assert kill["resumed"]["corpus_wikipedia"] == 1 and kill["resumed"]["all"] == 1
    assert (finished / DOCUMENTS / "_SUCCESS").exists()
    articles = [page.page_id for page in iter_dump_pages(DUMP) if page.ns == 0 and page.redirect_to is None]
    doc_ids = [row["doc_id"] for row in pq.read_table(finished / DOCUMENTS, columns=["doc_id"]).to_pylist()]
    assert sorted(doc_ids) == sorted(map(str, articles))


# --- 4. Bad input -----------------------------------------------------------------------------


def test_empty_corpora_are_errors_that_name_the_files(spark, tmp_path, caplog):
    """A dump without articles, an S2ORC file without papers: the corpus job of each file counts
    and logs it as a skip (a domain's other files may be fine), and a domain whose files together
    hold no document is an error where they are first read together, the linking stage, that
    names them; no linking output is written (an empty table hours later is worse)."""
    empty = write_dump(tmp_path / "empty-pages-articles.xml.bz2", [])
    redirect = tmp_path / "redirect-pages-articles.xml.bz2"
    page = "<title>Corvel Town</title><ns>0</ns><id>7</id><redirect title='Corvel'/>"
    text = "<revision><text>#REDIRECT [[Corvel]]</text></revision>"
    redirect.write_bytes(bz2.compress(f"<mediawiki><page>{page}{text}</page></mediawiki>".encode()))
    corpus = {}
    for dump in (empty, redirect):
        out = tmp_path / "corpus" / dump.name
        counts = build_wikipedia_corpus(spark, [str(dump)], str(out / "documents"), str(out / "pages"))
        assert (counts["articles"], counts["files_without_documents"]) == (0, 1), counts
        corpus[dump] = out
    assert counts["redirects"] == 1
    warnings = [
        r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "no document in" in r.getMessage()
    ]
    assert [str(empty)] == re.findall(r"\['([^']+)'\]", warnings[0]) and "redirects=1" in warnings[1], warnings
    documents = [str(out / "documents") for out in corpus.values()]
    pages = [str(out / "pages") for out in corpus.values()]
    with pytest.raises(ValueError, match="no document in") as err:
        link_wikipedia(spark, documents, pages, str(tmp_path / "aliases"), str(tmp_path / "mentions"))
    assert str(documents) in str(err.value) and "every corpus file was empty" in str(err.value)
    assert not (tmp_path / "aliases").exists() and not (tmp_path / "mentions").exists()

    papers = tmp_path / "papers.jsonl"
    papers.write_text('{"paper_id": "1", "title": null}\n')
    counts = build_s2orc_corpus(spark, [str(papers)], str(tmp_path / "s2orc"))
    assert (counts["documents"], counts["skipped_no_text"], counts["files_without_documents"]) == (0, 1, 1)
    with pytest.raises(ValueError, match=re.escape(f"no document in {[str(tmp_path / 's2orc')]}")):
        link_by_string(spark, [str(tmp_path / "s2orc")], {"Corvel": ["Corvel"]}, str(tmp_path / "s2orc-mentions"))
    assert not (tmp_path / "s2orc-mentions").exists()


def test_task_entities_without_sentences_are_counted(finished):
    """The fixture's task has a name the corpus lacks and a page no sentence mentions: both are
    counted in the job logs, neither gets a table row, and the run finished."""
    logs = finished / "logs" / "samples" / "wikipedia"
    resolved = pq.read_table(finished / "results" / "task_entities" / "wikipedia" / "task_entities.parquet").to_pylist()
    frequencies = table_rows(finished / "results" / "samples" / "wikipedia" / "frequencies")
    by_name = {row["name"]: row for row in resolved}
    assert by_name["Nobody Atall"]["entity_id"] is None
    unmentioned = by_name["History of Valdoria"]["entity_id"]
    assert unmentioned is not None and frequencies[unmentioned]["frequency"] == 0
    missing = [row["name"] for row in resolved if row["entity_id"] is None]  # the demo's own "drums" too
    assert sum(row["frequency"] == 0 for row in frequencies.values()) == 1
    task_log = finished / "logs" / "task_entities" / "wikipedia.log"
    assert f"task entities: how_missing = {len(missing)}" in task_log.read_text()
    assert "task entity 'Nobody Atall' found no entity (closest: " in task_log.read_text()  # named, not only counted
    counts = json.loads((finished / "results" / "task_entities" / "wikipedia" / "counts.json").read_text())
    assert sorted(counts["details"]["not_found"]) == sorted(missing)
    assert "sample_mentions: wanted_without_mentions = 1" in (logs / "sample.log").read_text()
    assert unmentioned not in table_rows(finished / TABLE)


def test_unknown_model_fails_with_its_name(finished, tmp_path):
    """A model name that nothing can load: the encoding job fails and the terminal shows why."""
    work = copy_of(finished, tmp_path / "work")
    config = yaml.safe_load((work / "config" / "config.yaml").read_text())
    config["models"].append({"name": "no-such-org/no-such-model"})
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    target = "results/tables/wikipedia/no-such-org--no-such-model/shards/0-of-2.parquet"
    run = subprocess.run(
        [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(work), "--cores", "1", target],
        capture_output=True,
        text=True,
        cwd=work,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    assert run.returncode != 0
    assert "cannot load masked LM 'no-such-org/no-such-model'" in run.stdout + run.stderr


# --- 5. Guards --------------------------------------------------------------------------------

UNSAFE_LOADS = re.compile(
    r"\b(?:import|from) (?:c?[Pp]ickle|_pickle|dill|joblib|shelve|marshal)\b|\bpickle\.loads?\(|\bread_pickle\("
    r"|allow_pickle\s*=\s*True|\byaml\.(?:unsafe_)?load\(|trust_remote_code\s*=\s*True"
)


def test_no_code_unpickles_or_runs_downloaded_code():
    """Tables are Parquet/Arrow, models safetensors through from_pretrained: nothing in pelt reads
    pickles (arbitrary code on load), calls torch.load without weights_only=True or trusts remote code."""
    sources = [
        *(REPO / "src").rglob("*.py"),
        *(REPO / "workflow").rglob("*.py"),
        *(REPO / "workflow").rglob("*.smk"),
        REPO / "Snakefile",
        *(REPO / "examples").rglob("*.py"),
        *(REPO / "benchmarks").rglob("*.py"),
    ]
    assert len(sources) > 20
    found = []
    for path in sources:
        text = path.read_text()
        found += [f"{path.relative_to(REPO)}: {m.group(0)}" for m in UNSAFE_LOADS.finditer(text)]
        for call in re.finditer(r"\btorch\.load\(", text):
            args = text[call.end() : text.find(")", call.end())]
            if "weights_only=True" not in args:
                found.append(f"{path.relative_to(REPO)}: torch.load without weights_only=True")
    assert not found, found
