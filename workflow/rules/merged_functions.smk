# Helpers of the merged domains' rules (config `merged`; pelt.sampling.merge): their configs mapped
# to the inputs of merged_task_entities (task_entities.smk) and merge_samples (sampling.smk).
# common.smk holds what the other rules ask of a merged domain (its table's inputs, its kind).


def merged_task_entities_inputs(wildcards):
    """Each corpus of a merged domain: its task entities (which hold the merged domain's tasks'
    too: tasks_of_domain) and its entity ids (their QIDs)."""
    of = MERGED[wildcards.domain]["of"]
    return {
        "corpus_entities": expand(
            results("task_entities/{domain}/task_entities.parquet"), domain=of
        ),
        "ids": expand(results("linking/{domain}/ids"), domain=of),
    }


def merge_inputs(wildcards):
    """What a merged domain's sample is drawn from: each of its corpora's sample, frequencies, entity
    ids (their QIDs) and corpus counts (their languages), and its own task entities (on demand).
    """
    of = MERGED[wildcards.domain]["of"]
    return {
        "samples": expand(results("samples/{domain}/sentences"), domain=of),
        "frequencies": expand(results("samples/{domain}/frequencies"), domain=of),
        "ids": expand(results("linking/{domain}/ids"), domain=of),
        "corpus_counts": [p for d in of for p in corpus_outputs(d, "counts.json")],
        "task_entities": results(
            f"task_entities/{wildcards.domain}/task_entities.parquet"
        ),
    }
