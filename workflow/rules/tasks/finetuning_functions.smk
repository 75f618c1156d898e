# The fine-tuning template's helpers (finetuning.smk includes this file first; common.smk holds what
# every kind shares, and the result files of the fine-tuning runs, which the landing page reads too).


def settings_constraint(settings):
    """A wildcard constraint matching exactly ``settings``; none matches NEVER."""
    return "|".join(map(re.escape, sorted(set(settings)))) or NEVER


def kind_settings(kind):
    """Wildcard constraint of a fine-tuning kind's rule: the settings its configured tasks run."""
    return settings_constraint(
        setting
        for name in registry.tasks_of_kind(config["tasks"], kind)
        for setting in registry.settings_of(name, config["tasks"][name])
    )


# How the fine-tuning runs (the kinds of pelt.registry.FINETUNING_RULES) become jobs, decided here
# alone (config `finetuning_jobs`): one job per run (`run`: jobs that go to a cluster spread a
# setting's runs over its GPUs; profiles/slurm sets it), or one job per task, model and setting
# running its runs one after another in one process (`setting`, the default: on one machine, torch
# and transformers are imported once a setting, not once a run). finetuning.smk defines its rules
# by it; either way each run writes the same result file, byte for byte.
FINETUNING_PER_RUN = config["finetuning_jobs"] == "run"


def finetuning_tasks():
    """The configured tasks whose kind's rules are the fine-tuning template: with a setting's runs in
    one job, each gets a rule of its own, named after it (its outputs are its own runs').
    """
    kinds = registry.kinds_with_rules(registry.FINETUNING_RULES)
    return [
        name
        for name, task in config["tasks"].items()
        if registry.kind_of(name, task) in kinds
    ]


def task_settings(name):
    """Wildcard constraint of a fine-tuning task's own rule: the settings it runs."""
    return settings_constraint(registry.settings_of(name, config["tasks"][name]))


def check_finetuning_jobs():
    """When the run starts (the Snakefile's onstart): where jobs go to a cluster (an executor that is
    not local) while a setting's fine-tuning runs are one job, a warning that each such job runs its
    runs in series on one GPU (the paper's 20 a setting), and how to spread them: a `--config` on
    the command line replaces the profile's, `finetuning_jobs: run` with it."""
    if not FINETUNING_PER_RUN and workflow.non_local_exec:
        from snakemake.logging import logger

        logger.warning(
            "finetuning_jobs: setting - each fine-tuning job runs every variant and seed of its"
            " setting in series on one GPU; for a job per run (a setting's runs on as many GPUs)"
            " add --config finetuning_jobs=run (profiles/slurm sets it, but a --config on the"
            " command line replaces the profile's)"
        )


def task_runs(name):
    """The runs of each setting of a fine-tuning task, (variant, seed) pairs in the order a job of
    the setting runs them: each variant (task_variants) on each of its seeds (variant_seeds).
    """
    return [
        (variant, seed)
        for variant in task_variants(name)
        for seed in variant_seeds(name, variant)
    ]


def finetuning_outputs(name):
    """The result files of a fine-tuning task's job of a setting, one of each run (task_runs), for
    the {task}, {model} and {setting} of the job."""
    wildcards = dict(task="{task}", model="{model}", setting="{setting}")
    return [
        results(FINETUNING_RESULT.format(variant=variant, seed=seed, **wildcards))
        for variant, seed in task_runs(name)
    ]


def finetuning_run_inputs(wildcards, variant):
    """A fine-tuned run's inputs, by name: every variant reads the table, the baseline only
    for the heads' frequencies (results split rare / frequent), a control its control table; the
    variants that inject take the model's norm sweep where that chooses L (norm_sweep).
    """
    files = task_run_files(wildcards.task, wildcards.setting)
    inputs = evaluation_inputs(wildcards, wildcards.task, files, with_table=True)
    if variant != "baseline" and (sweep := norm_sweep(wildcards.model)):
        inputs["norm_sweep"] = sweep
    return variant_table(inputs, variant)


def finetuning_run_options(wildcards, variant, seed):
    """Keyword arguments of run_fewrel / run_wiki80 known before the run (pelt.registry)."""
    return canonical(
        registry.runner_options(
            wildcards.task,
            config["tasks"][wildcards.task],
            wildcards.setting,
            seed,
            variant,
        )
    )


def finetuning_inputs(wildcards):
    """Input function of a job of one run (`finetuning_jobs: run`): its inputs by name."""
    return finetuning_run_inputs(wildcards, wildcards.variant)


def finetuning_options(wildcards):
    """Params function of a job of one run (`finetuning_jobs: run`): its runner's options."""
    return finetuning_run_options(wildcards, wildcards.variant, int(wildcards.seed))


def finetuning_setting_inputs(wildcards):
    """Input function of a job of a setting (`finetuning_jobs: setting`): the inputs of each of its
    runs, each file once."""
    paths = [
        path
        for variant in task_variants(wildcards.task)
        for value in finetuning_run_inputs(wildcards, variant).values()
        for path in ([value] if isinstance(value, str) else value)
    ]
    return list(dict.fromkeys(paths))


def finetuning_runs(wildcards):
    """Params function of a job of a setting: each of its runs (pelt.tasks.finetuning.run_each), in
    the order of its outputs (finetuning_outputs: each run's result file named there alone), with
    what a job of that run alone gets: its variant and seed, its inputs by name, its result file
    and its runner's options."""
    outputs = [
        path.format(
            task=wildcards.task, model=wildcards.model, setting=wildcards.setting
        )
        for path in finetuning_outputs(wildcards.task)
    ]
    return [
        {
            "variant": variant,
            "seed": seed,
            "input": finetuning_run_inputs(wildcards, variant),
            "output": output,
            "options": finetuning_run_options(wildcards, variant, seed),
        }
        for (variant, seed), output in zip(
            task_runs(wildcards.task), outputs, strict=True
        )
    ]
