import glob
import re

from snakemake.utils import min_version, validate

min_version("9.0")


validate(config, workflow.source_path("../schemas/config.schema.yaml"))

CORPORA = config["corpora"]
NEVER = "(?!x)x"  # a wildcard constraint that matches nothing


def domains_of_kind(kind):
    """Wildcard constraint: the domains whose corpus is of this kind."""
    names = [name for name, corpus in CORPORA.items() if corpus["kind"] == kind]
    return "|".join(names) if names else NEVER


def corpus_files(key):
    """Input function: the files of a corpus key (`path`, `page_props`), globs expanded, sorted."""

    def files(wildcards):
        paths = CORPORA[wildcards.domain].get(key, [])
        paths = [paths] if isinstance(paths, str) else paths
        return expand_globs(paths, f"corpora.{wildcards.domain}.{key}")

    return files


def model_id(model):
    """The name in output paths: `id`, or the model name made path-safe (org/name -> org--name)."""
    return model.get("id", re.sub(r"[^\w.-]+", "--", model["name"]))


MODELS = {model_id(m): m for m in config["models"]}


def model_name_or_path(wildcards):
    """What from_pretrained gets: the built demo model's folder, or the configured name."""
    name = MODELS[wildcards.model]["name"]
    return "results/models/demo" if name == "demo" else name


def model_input(wildcards):
    """The demo model is a workflow output; a hub name or an outside path is not."""
    return ["results/models/demo"] if MODELS[wildcards.model]["name"] == "demo" else []


def model_norm(wildcards):
    """The configured norm L, or None for the model family's default."""
    return MODELS[wildcards.model].get("norm")


def spark_params():
    return {
        "master": config["spark"]["master"],
        "driver_memory": config["spark"]["driver_memory"],
    }


def task_domains():
    return sorted({task["domain"] for task in config["tasks"].values()})


def all_outputs():
    outputs = []
    for domain in task_domains():
        if domain not in CORPORA:
            raise WorkflowError(
                f"tasks: domain {domain!r} is not one of corpora: {sorted(CORPORA)}"
            )
        outputs += expand(
            "results/tables/{domain}/{model}/table.parquet",
            domain=domain,
            model=MODELS,
        )
    if "lama" in config["tasks"]:
        outputs += expand(
            "results/eval/summary/{summary}.{ext}",
            summary=["lama", "norm_sweep"],
            ext=["csv", "md"],
        )
    return outputs


def expand_globs(patterns, key):
    """Files of a list of globs, sorted; a glob that matches nothing is a config error."""
    files = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern))
        if not matched:
            raise WorkflowError(f"{key}: no file matches {pattern!r}")
        files.extend(matched)
    return files


def tasks_of_domain(domain):
    """The `tasks:` entries that use this domain's table."""
    return {
        name: task for name, task in config["tasks"].items() if task["domain"] == domain
    }


def lama_files():
    task = config["tasks"]["lama"]
    return {
        "facts": expand_globs(task["facts"], "tasks.lama.facts"),
        "relations": task["relations"],
        "common_vocab": task["common_vocab"],
    }


def task_files(wildcards):
    """Every task data file of a domain, so that editing one reruns what depends on it."""
    files = []
    if "lama" in tasks_of_domain(wildcards.domain):
        files += lama_files()["facts"]
    return files


def lama_inputs(wildcards):
    """Both variants read the table: the baseline only for the frequency buckets."""
    domain = config["tasks"]["lama"]["domain"]
    return dict(
        lama_files(),
        model=model_input(wildcards),
        table=f"results/tables/{domain}/{wildcards.model}/table.parquet",
        task_entities=f"results/samples/{domain}/task_entities.parquet",
    )
