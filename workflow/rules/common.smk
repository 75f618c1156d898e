import os
import re
import sys

from snakemake.utils import min_version

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
)

min_version("9.0")

# Jobs that build entity tables (corpus, linking, sampling, encoding) go before the evaluation jobs
# that read them: every domain's table is ready early and the one-thread fine-tuning jobs fill the
# cores at the end, instead of a domain's Spark chain running alone after them (the suite's demo
# run: its biomedical chain waited 300 s behind the Wikipedia fine-tuning, then ran 100 s alone).
TABLE_PRIORITY = 1


def config_error(function, *args):
    """A pelt.registry or pelt.config function's answer, its refusal (a file not there, a setting
    missing, a path leaving its folder) a config error in one line."""
    try:
        return function(*args)
    except (ValueError, FileNotFoundError) as err:
        raise WorkflowError(str(err)) from None


# The task and corpus kinds from outside pelt first (config `task_kinds`, `corpus_kinds`): each
# one's schema block is part of the schema, and its rules are included with the built-in kinds'
# (the Snakefile).
config_error(registry.import_kinds, config.get("task_kinds", []), "task_kinds")
config_error(registry.import_kinds, config.get("corpus_kinds", []), "corpus_kinds")
SCHEMA = config_schema(
    workflow.source_path("../schemas/config.schema.yaml"), workflow.basedir
)
CONFIG_PROBLEMS = config_problems(config, SCHEMA)
if CONFIG_PROBLEMS:
    raise WorkflowError(
        "Error validating config file:\n  " + "\n  ".join(CONFIG_PROBLEMS)
    )
fill_defaults(config, SCHEMA)

# The run's folder: every output and log of a named run (config `run`, else the last --configfile's
# stem: pelt.config.run_name) is under runs/<run>/, so that a second config never overwrites another
# config's outputs nor reruns them when the first is run again; the default config writes results/
# and logs/. Downloads (download.smk) are the same files whichever config asks: shared, in data/.
RUN = config_error(
    run_name, config.get("run"), workflow.overwrite_configfiles, "config/config.yaml"
)
RESULTS = "results" if RUN is None else f"runs/{RUN}/results"
LOGS = "logs" if RUN is None else f"runs/{RUN}/logs"


def results(path):
    """An output's path: ``path`` under the run's results folder."""
    return f"{RESULTS}/{path}"


def logs(path):
    """A job log's path: ``path`` under the run's logs folder."""
    return f"{LOGS}/{path}"


CORPORA = config["corpora"]
# Merged domains (config `merged`): one table per QID over several corpora (pelt.sampling.merge).
MERGED = config["merged"]
NEVER = "(?!x)x"  # a wildcard constraint that matches nothing


def domains_merged(merged):
    """Wildcard constraint: the merged domains, or the corpora (whose own stages make their samples)."""
    return "|".join(map(re.escape, MERGED if merged else CORPORA)) or NEVER


def check_merged():
    """A merged domain is named apart from the corpora and merges corpora, or the plan stops in a line."""
    for name, entry in MERGED.items():
        if name in CORPORA:
            raise WorkflowError(
                f"merged.{name}: a corpus has that name; name the merged domain apart"
            )
        unknown = [c for c in entry["of"] if c not in CORPORA]
        if unknown:
            raise WorkflowError(
                f"merged.{name}.of: {unknown} not among corpora: {sorted(CORPORA)}"
            )


def domains_of_kind(kind):
    """Wildcard constraint of a corpus kind's own rules (its corpus job, its linker): the domains
    whose corpus is of this kind."""
    names = [name for name, corpus in CORPORA.items() if corpus["kind"] == kind]
    return "|".join(names) if names else NEVER


def domains_with_pages(has_pages):
    """Wildcard constraint: the domains whose corpus kind has pages, or has none
    (pelt.registry.CORPUS_KINDS), which decides their linker and task-entity resolver.
    """
    return "|".join(registry.domains_with_pages(CORPORA, has_pages)) or NEVER


def corpus_files(key):
    """Input function: the files of a corpus key (`path`, or a file key of the corpus kind's own
    schema block), globs expanded, sorted."""

    def files(wildcards):
        paths = CORPORA[wildcards.domain].get(key, [])
        return expand_globs(paths, f"corpora.{wildcards.domain}.{key}")

    return files


def corpus_file_ids(domain):
    """File id -> path of each corpus file of a domain; the corpus stage runs one job per file.

    The id is the file's name (characters other than letters, digits, `.`, `_`, `+` and `-` made
    `_`): readable in output paths, and the same whatever other files come or go, so that a new
    dump file adds one job instead of redoing the others. Two files that would get the same id
    (one name in two folders) are a config error: their outputs would overwrite each other.
    """
    ids = {}
    for path in expand_globs(CORPORA[domain]["path"], f"corpora.{domain}.path"):
        file_id = re.sub(r"[^\w.+-]", "_", os.path.basename(path))
        config_error(
            confined,
            results(f"corpus/{domain}/files"),
            file_id,
            f"corpora.{domain}.path",
        )
        first = ids.setdefault(file_id, path)
        if os.path.realpath(first) != os.path.realpath(path):
            raise WorkflowError(
                f"corpora.{domain}.path: {first!r} and {path!r} would both be written to"
                f" {results(f'corpus/{domain}/files/{file_id}')}/; rename one of them"
            )
    return ids


def corpus_language(wildcards):
    """Params function: the domain's `language` (None: the dump's own, and English for S2ORC)."""
    return CORPORA[wildcards.domain].get("language")


def corpus_file(wildcards):
    """Input function of the corpus rules: the one file that the {file} wildcard names."""
    ids = corpus_file_ids(wildcards.domain)
    if wildcards.file not in ids:
        raise WorkflowError(
            f"{results(f'corpus/{wildcards.domain}/files/{wildcards.file}')}: no file of"
            f" corpora.{wildcards.domain}.path has that id; the ids are {sorted(ids)}"
        )
    return ids[wildcards.file]


def corpus_outputs(domain, part):
    """One corpus output (`documents`, `pages`, `counts.json`) of every file of a domain: what
    the stages after the corpus read as one (Spark and pyarrow take the list of paths).
    """
    return expand(
        results("corpus/{domain}/files/{file}/{part}"),
        domain=domain,
        file=corpus_file_ids(domain),
        part=part,
    )


def domain_corpus(part):
    """Input function: corpus_outputs of the job's {domain}."""
    return lambda wildcards: corpus_outputs(wildcards.domain, part)


# Id (the name in output paths) -> model; ids that collide or leave their folder are refused.
MODELS = config_error(model_ids, config["models"])
config_error(check_model_names, config["models"])


def model_name_or_path(wildcards):
    """What from_pretrained gets: the built demo model's folder, or the configured name."""
    name = MODELS[wildcards.model]["name"]
    return results("models/demo") if name == "demo" else name


def model_input(wildcards):
    """The demo model is a workflow output; a hub name or an outside path is not."""
    return [results("models/demo")] if MODELS[wildcards.model]["name"] == "demo" else []


def model_norm(wildcards):
    """The configured norm L, or None for the model family's default."""
    return MODELS[wildcards.model].get("norm")


def norm_sweep(model):
    """The norm sweep whose L a model's runs with the table take, or None where the config sets
    L or no task sweeps (pelt.registry.norm_sweep)."""
    sweep = registry.norm_sweep(MODELS[model], config["tasks"])
    return None if sweep is None else results(sweep.format(model=model))


def spark_params():
    """Spark's settings: how fast a job runs, not what it writes (pelt.config.SpeedOnly)."""
    return SpeedOnly(
        {
            "master": lookup(dpath="spark/master", within=config),
            "driver_memory": lookup(dpath="spark/driver_memory", within=config),
            "shuffle_partitions": lookup(
                dpath="spark/shuffle_partitions", within=config, default=None
            ),
            "split_bytes": lookup(
                dpath="spark/split_bytes", within=config, default=None
            ),
            "arrow_batch_rows": lookup(dpath="spark/arrow_batch_rows", within=config),
            "java_options": lookup(dpath="spark/java_options", within=config),
        }
    )


VARIANTS = ["baseline", "pelt"]
# Every task also scores the table's controls (pelt.eval.controls): a gain must come from each
# entity's own vector. `swapped` (within kinds) needs the domain's kinds file.
CONTROLS = ["permuted", "random", "swapped"]


def task_variants(name):
    """The variants a task runs: without and with the table, and the controls its domains allow
    (none where the task is not configured)."""
    if name not in config["tasks"]:
        return []
    task = config["tasks"][name]
    domains = {task["domain"], task.get("train_domain", task["domain"])}
    kinds = all(CORPORA.get(d, {}).get("kinds") for d in domains)  # merged: none
    return VARIANTS + [c for c in CONTROLS if c != "swapped" or kinds]


def control_inputs(wildcards):
    """A control table is drawn from the table; the swapped one also reads the domain's kinds."""
    inputs = {
        "table": results(f"tables/{wildcards.domain}/{wildcards.model}/table.parquet")
    }
    if wildcards.control == "swapped":
        inputs["kinds"] = CORPORA[wildcards.domain]["kinds"]
    return inputs


def task_kind(name):
    """The kind of a configured task (pelt.registry): FewRel 2.0 is a FewRel task under another key."""
    return registry.kind_of(name, config["tasks"][name]).name


def kind_tasks(kind):
    """Wildcard constraint of a kind's own rule: the configured tasks of that kind (pelt.registry)."""
    return (
        "|".join(map(re.escape, registry.tasks_of_kind(config["tasks"], kind))) or NEVER
    )


def kind_rules():
    """The rules files of the registered corpus and task kinds (pelt.registry.CORPUS_KINDS and KINDS),
    each once (the fine-tuning kinds share a template: pelt.registry.FINETUNING_RULES), as the
    Snakefile includes them: the kinds' own jobs, which no other rules file names.
    """
    kinds = [*registry.CORPUS_KINDS.values(), *registry.KINDS.values()]
    paths = [os.path.join(workflow.basedir, kind.rules) for kind in kinds if kind.rules]
    return list(dict.fromkeys(paths))


def task_domains():
    """The domains whose table some task uses, to test or (`train_domain`) to train."""
    return sorted(
        {
            d
            for task in config["tasks"].values()
            for d in (task["domain"], task.get("train_domain"))
            if d
        }
    )


def table_domains():
    """The domains that get tables: those some task uses, or with `sampling.entities: all`
    every corpus (a table of everything linked, wanted by no task)."""
    if lookup(dpath="sampling/entities", within=config) == "all":
        return sorted(CORPORA) + sorted(MERGED)
    return task_domains()


def stage_domains():
    """The domains whose stages a run runs: the table domains, each merged one after its corpora."""
    domains = [[*MERGED.get(d, {}).get("of", []), d] for d in table_domains()]
    return list(dict.fromkeys(d for group in domains for d in group))


# A fine-tuning run's result file, one per task, model, variant, setting and seed.
FINETUNING_RESULT = "eval/{task}/{model}/{variant}/{setting}/seed{seed}.json"


def finetuning_results(names):
    """The result files of tasks: one per model, variant, setting and seed."""
    return [
        path
        for name in names
        for variant in task_variants(name)
        for path in expand(
            results(FINETUNING_RESULT),
            task=name,
            model=MODELS,
            variant=variant,
            setting=registry.settings_of(name, config["tasks"][name]),
            seed=variant_seeds(name, variant),
        )
    ]


def variant_seeds(name, variant):
    """The seeds a variant of a fine-tuning task runs: every seed, or `control_seeds` for a control."""
    task = config["tasks"][name]
    return (
        task.get("control_seeds", task["seeds"])
        if variant in CONTROLS
        else task["seeds"]
    )


def result_outputs():
    """Every output of a run but the stage-times figure, which reads the logs of their jobs."""
    outputs = []
    for domain in table_domains():
        if domain not in CORPORA and domain not in MERGED:
            raise WorkflowError(
                f"tasks: domain {domain!r} is not one of corpora: {sorted(CORPORA)}"
                + (f" nor merged: {sorted(MERGED)}" if MERGED else "")
            )
    outputs += run_tables()
    kinds = [registry.kind_of(name, task) for name, task in config["tasks"].items()]
    summaries = list(dict.fromkeys(s for kind in kinds for s in kind.summaries))
    outputs += expand(
        results("eval/summary/{summary}.{ext}"),
        summary=summaries,
        ext=["csv", "md", "html"],
    )
    figures = [*dict.fromkeys(f for kind in kinds for f in kind.figures), "frequencies"]
    if task_domains():  # how the task entities were linked; none asked, nothing to say
        figures.append("coverage")
        outputs += expand(results("eval/report/coverage.{ext}"), ext=["csv", "html"])
    outputs += expand(results("eval/report/{figure}.svg"), figure=figures)
    outputs += kind_results()
    outputs += expand(results("eval/report/input_quality.{ext}"), ext=["csv", "html"])
    outputs.append(results("eval/report/headline.html"))
    return outputs


def kind_results():
    """The results each task's kind asks for itself (pelt.registry.TaskKind.results), one per task
    and model (a pattern without {model}: one per task)."""
    paths = [
        path
        for name, task in config["tasks"].items()
        for pattern in registry.kind_of(name, task).results
        for path in expand(results(pattern), task=name, model=MODELS)
    ]
    return list(dict.fromkeys(paths))


def all_outputs():
    return result_outputs() + [results("eval/report/stage_times.svg")]


def headline_inputs(wildcards):
    """The per-run results the landing page sums up: those it leads with (LAMA's), without and with
    the table, the norm sweeps, every fine-tuning run (pelt.registry: headline_results,
    norm_sweeps, finetuned_tasks), the run's tables and its entity lists' counts."""
    tasks = config["tasks"]
    return {
        "lead": [
            path
            for pattern in registry.headline_results(tasks)
            for path in expand(results(pattern), model=MODELS, variant=VARIANTS)
        ],
        "sweeps": [
            path
            for pattern in registry.norm_sweeps(tasks)
            for path in expand(results(pattern), model=MODELS)
        ],
        "finetuning": finetuning_results(registry.finetuned_tasks(tasks)),
        "tables": run_tables(),
        "counts": [listed.counts for listed in listed_tasks()],
    }


def expand_globs(patterns, key):
    """Files of a glob or a list of globs, sorted; a glob that matches nothing is a config error."""
    return config_error(registry.expand_globs, patterns, key)


def task_data_files(name):
    """Each data key's files of a task (pelt.registry.data_files): whose entities its table needs."""
    return config_error(
        registry.data_files, name, config["tasks"][name], config["tasks"]
    )


def task_run_files(name, setting=None):
    """The files one evaluation run of a task reads (pelt.registry.run_files)."""
    return config_error(
        registry.run_files, name, config["tasks"][name], config["tasks"], setting
    )


def tasks_of_domain(domain):
    """The `tasks:` entries that use this domain's table (to test, or to train: a FewRel task's
    `train_domain`), with the kind pelt.tasks reads them as where their key does not say it. A
    merged domain's tasks are also its corpora's, as if naming each: every corpus resolves and
    samples their entities, of which the merged sample is drawn (pelt.sampling.merge).
    """
    tasks = {}
    for name, task in config["tasks"].items():
        task = task if task_kind(name) == name else dict(task, kind=task_kind(name))
        for key in ("domain", "train_domain"):
            if domain in MERGED.get(task.get(key), {}).get("of", []):
                task = dict(task, **{key: domain})
        if domain in (task["domain"], task.get("train_domain")):
            tasks[name] = task
    return tasks


def task_entity_params(wildcards):
    """The task_entities rules' params: of each task of the domain, what decides its entities (its
    domains, kind and data files, globs expanded) and nothing else, so that changing an evaluation
    setting (batch size, epochs...) reruns that evaluation, not the sampling and encoding before it.
    A FewRel task's training files are named even when they are the default (Wiki80's), since its
    training domain needs their entities."""
    params = {}
    for name, task in tasks_of_domain(wildcards.domain).items():
        kind = registry.kind_of(name, task)
        params[name] = {key: task[key] for key in registry.DOMAIN_KEYS if key in task}
        params[name].update(task_data_files(name))
        params[name].update({k: task[k] for k in kind.reader_keys if k in task})
    return canonical(params)


def task_files(wildcards):
    """Every task data file of a domain that pelt.tasks reads entities from, so that editing one
    reruns what depends on it."""
    return sorted(
        {
            path
            for name in tasks_of_domain(wildcards.domain)
            for paths in task_data_files(name).values()
            for path in paths
        }
    )


def evaluation_inputs(wildcards, task, files, with_table):
    """Input function body shared by the evaluations: data files, the model, and (with_table) the
    entity table of the task's domain with the domain's resolved task entities."""
    inputs = dict(files, model=model_input(wildcards))
    if with_table:
        domain = config["tasks"][task]["domain"]
        inputs["table"] = results(f"tables/{domain}/{wildcards.model}/table.parquet")
        train_domain = config["tasks"][task].get("train_domain", domain)
        if train_domain != domain:
            inputs["train_table"] = results(
                f"tables/{train_domain}/{wildcards.model}/table.parquet"
            )
            inputs["train_task_entities"] = results(
                f"task_entities/{train_domain}/task_entities.parquet"
            )
        inputs["task_entities"] = results(
            f"task_entities/{domain}/task_entities.parquet"
        )
    return inputs


COVERAGE_TABLES = [(domain, model) for domain in task_domains() for model in MODELS]


def coverage_inputs(wildcards):
    """Each task domain's resolved task entities, and every model's table of each domain, in the
    order of COVERAGE_TABLES."""
    return {
        "task_entities": expand(
            results("task_entities/{domain}/task_entities.parquet"),
            domain=task_domains(),
        ),
        "tables": [
            results(f"tables/{domain}/{model}/table.parquet")
            for domain, model in COVERAGE_TABLES
        ],
    }


def input_quality_inputs(wildcards):
    """Input function: the counts files of every stage of each domain a run samples, in pipeline
    order: the corpus (one per file), linking, task entities, sampling; a merged domain has the
    last two only (it has no text of its own)."""
    paths = []
    for domain in stage_domains():
        if domain not in MERGED:
            paths += corpus_outputs(domain, "counts.json")
            paths.append(results(f"linking/{domain}/counts.json"))
        paths.append(results(f"task_entities/{domain}/counts.json"))
        paths.append(results(f"samples/{domain}/counts.json"))
    return paths


def table_inputs(wildcards):
    """The entity_table job's ids (QID, aliases) and the counts files that say what its text was
    (pelt.logs.table_corpus): a corpus's linked ids and its corpus jobs' counts (its
    language); a merged domain's ids and sample counts (its corpora's languages and coverage).
    """
    domain = wildcards.domain
    if domain in MERGED:
        return {
            "ids": results(f"samples/{domain}/ids"),
            "corpus_counts": [results(f"samples/{domain}/counts.json")],
        }
    return {
        "ids": results(f"linking/{domain}/ids"),
        "corpus_counts": corpus_outputs(domain, "counts.json"),
    }


def domain_kind(wildcards):
    """A domain's corpus kind; a merged domain's, where its corpora share one (else None)."""
    of = MERGED.get(wildcards.domain, {}).get("of", [wildcards.domain])
    kinds = {CORPORA[name]["kind"] for name in of}
    return kinds.pop() if len(kinds) == 1 else None


def variant_table(inputs, variant):
    """A control variant injects its control table instead of the table (same ids and counts)."""
    for key in ("table", "train_table"):
        if variant in CONTROLS and key in inputs:
            inputs[key] = inputs[key].replace(
                "table.parquet", f"controls/{variant}.parquet"
            )
    return inputs


def check_tasks():
    """Config errors the schema cannot express, refused before the DAG is built (pelt.registry.check_task)."""
    for name, task in config["tasks"].items():
        config_error(registry.check_task, name, task, config["tasks"], downloaded)


def check_entities_are_named():
    """On demand, the tables hold the entities the tasks name: with no task, there is nothing to build."""
    if (
        lookup(dpath="sampling/entities", within=config) == "on_demand"
        and not task_domains()
    ):
        raise WorkflowError(
            "tasks: none names an entity, so no table would be built; add an entity list (a list of"
            " Wikipedia titles, QIDs or names: docs/own-entities.md) or set sampling.entities: all"
        )


def check_machine():
    """What this machine lacks for the run (pelt.info.preflight), one line each, refused when the run
    starts and before any job does: Java where a Spark stage is still to run, the packages of each
    corpus language's tokenizer, a GPU the config asks for. A dry run plans without asking.
    """
    from pelt.info import corpus_languages, preflight

    spark = any(
        not os.path.exists(results(f"samples/{d}/counts.json"))
        for d in [*CORPORA, *MERGED]
    )
    problems = preflight(
        spark=spark,
        gpu=lookup(dpath="encoding/device", within=config) == "cuda",
        languages=corpus_languages(CORPORA) if spark else (),
    )
    if problems:
        raise WorkflowError(
            "this machine lacks what the run needs:\n" + "\n".join(problems)
        )


def run_tables():
    """The tables a run builds: each table domain's, for every model."""
    return expand(
        results("tables/{domain}/{model}/table.parquet"),
        domain=table_domains(),
        model=MODELS,
    )


def listed_tasks():
    """The tasks whose kind speaks at the end of a run (an entity list's found and not found:
    pelt.registry.TaskKind.end_of_run), with their files and task-entity counts."""
    from pelt.report.outcome import ListedTask

    return [
        ListedTask(
            name,
            task,
            [
                f
                for key in kind.data_keys
                for f in expand_globs(task[key], f"tasks.{name}.{key}")
            ],
            results(f"task_entities/{task['domain']}/counts.json"),
        )
        for name, task in config["tasks"].items()
        if (kind := registry.kind_of(name, task)).end_of_run
    ]


def end_of_run_lines():
    """What the terminal shows when a run ends: each table it wrote and each entity list's found and
    not found with the closest names (pelt.report.outcome), as its landing page does."""
    from pelt.report.outcome import outcome_lines

    tables = [path for path in run_tables() if os.path.exists(path)]
    return outcome_lines(tables, listed_tasks())


DOWNLOAD = config.get("download", {})
RELEASES = DOWNLOAD.get("files", {})


def downloaded(paths):
    """Whether a config path (or any of a list of them) names files the download rules write (under
    data/, with a `download` config): not there before `snakemake download`, so checked when a job
    needs them, not at parse time."""
    return bool(DOWNLOAD) and any(
        os.path.normpath(path).split(os.sep)[0] == "data"
        for path in ([paths] if isinstance(paths, str) else paths)
    )


def check_corpora():
    """Each corpus glob matches a file, or the run stops here in a line naming the key (inside an
    input function, Snakemake would report it as an error of whichever rule asked first).
    """
    for domain, corpus in CORPORA.items():
        if not downloaded(corpus["path"]):
            corpus_file_ids(domain)


check_merged()
check_entities_are_named()
check_tasks()
check_corpora()
ENWIKI_FILES = (
    "|".join(re.escape(name) for name in DOWNLOAD.get("enwiki_files", [])) or NEVER
)
RELEASE_FILES = "|".join(re.escape(path) for path in RELEASES) or NEVER
# The release archives a download unpacks (path under data/ -> its folder): the task kinds' (pelt.registry.archives).
ARCHIVES = registry.archives()


def archive_of(wildcards):
    """The archive a release folder is unpacked from (ARCHIVES)."""
    return next(f"data/{path}" for path, f in ARCHIVES.items() if f == wildcards.folder)


def download_targets():
    """Every file the `download` config names: the dump's files (with its checksum list) and the releases."""
    targets = [
        config_error(confined, "data", path, f"download.files.{path}")
        for path in RELEASES
    ]
    # the tasks read the unpacked files of an archive
    targets += [
        f"data/{folder}" for path, folder in ARCHIVES.items() if path in RELEASES
    ]
    if "enwiki_date" in DOWNLOAD:
        date = DOWNLOAD["enwiki_date"]
        targets += [
            f"data/enwiki/enwiki-{date}-{name}"
            for name in ["sha1sums.txt", *DOWNLOAD["enwiki_files"]]
        ]
    return targets


def enwiki_url(wildcards):
    """A dump file's address: <mirror>/enwiki/<date>/enwiki-<date>-<name>."""
    name = getattr(wildcards, "name", "sha1sums.txt")
    mirror = DOWNLOAD["enwiki_mirror"].rstrip("/")
    return f"{mirror}/enwiki/{wildcards.date}/enwiki-{wildcards.date}-{name}"


def release(wildcards):
    """URL and checksum (the strongest configured, or none) of a `download.files` entry."""
    entry = RELEASES[wildcards.path]
    algorithm = next((a for a in ("sha256", "sha1", "md5") if a in entry), "sha256")
    return {
        "url": entry["url"],
        "checksum": entry.get(algorithm),
        "algorithm": algorithm,
    }
