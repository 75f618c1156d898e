# mLAMA's helpers: its config mapped to the inputs and params of its rules (mlama.smk includes this
# file first; common.smk holds what every kind shares).


def mlama_inputs(wildcards):
    """The language's facts and templates, the model, the table of its corpus and the corpus's task
    entities (the baseline reads them for the frequency buckets only, as LAMA's), and the model's
    norm sweep where that chooses L (norm_sweep)."""
    inputs = evaluation_inputs(
        wildcards, wildcards.task, task_run_files(wildcards.task), with_table=True
    )
    if wildcards.variant != "baseline" and (sweep := norm_sweep(wildcards.model)):
        inputs["norm_sweep"] = sweep
    return variant_table(inputs, wildcards.variant)


def mlama_options(wildcards):
    """mLAMA's settings as configured (pelt.registry, pelt.tasks.mlama.settings)."""
    return canonical(
        registry.settings_options(wildcards.task, config["tasks"][wildcards.task])
    )


def mlama_language(name):
    """The language of an mLAMA task (pelt.tasks.mlama.language_of)."""
    from pelt.tasks.mlama import language_of

    return language_of(name, config["tasks"][name])
