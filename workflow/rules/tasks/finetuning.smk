# The rules template of the kinds fine-tuned per setting and seed whose runs have one shape (FewRel's,
# Wiki80's: their registry entries point their `rules` here, pelt.registry.FINETUNING_RULES, and the
# Snakefile includes it once). A run is one task, model, variant, setting and seed, made by the kind's
# job script (its entry's `script`) from the run's `snakemake` object. How runs become jobs is
# config `finetuning_jobs` (FINETUNING_PER_RUN, finetuning_functions.smk), and each run writes the
# same result file either way:
# - `run`: each kind gets one rule, named after it, one job per run (a cluster spreads them);
# - `setting` (the default): each configured task of such a kind gets one rule, named after the
#   task, one job per model and setting, which runs every run of the setting (each variant on each
#   of its seeds: task_runs) one after another in one process (pelt.tasks.finetuning). A run of the
#   demo fine-tunes for seconds: a job each, importing torch and transformers took about as long
#   again (issue 57). A change to any run's inputs or to the seeds reruns the setting's runs.
# Their summaries and figures are the fine-tuning kinds' (evaluation.smk, report.smk).


include: "finetuning_functions.smk"


if FINETUNING_PER_RUN:
    for kind in registry.kinds_with_rules(registry.FINETUNING_RULES):

        rule:
            name:
                kind.name
            input:
                unpack(finetuning_inputs),
            output:
                results(FINETUNING_RESULT),
            log:
                logs("eval/{task}/{model}/{variant}/{setting}/seed{seed}.log"),
            wildcard_constraints:
                task=kind_tasks(kind.name),
                variant="|".join(VARIANTS + CONTROLS),
                setting=kind_settings(kind.name),
                seed=r"[0-9]+",
            conda:
                "../../../envs/torch.yaml"
            threads: 1
            resources:
                gpu=1,
            params:
                model=model_name_or_path,
                norm=model_norm,
                options=finetuning_options,
                # Bound now: `script:` is read when the job runs, when the loop's `kind` is the last kind.
                script=os.path.join(workflow.basedir, kind.script),
            script:
                "{params.script}"

else:
    for name in finetuning_tasks():

        rule:
            name:
                name
            input:
                finetuning_setting_inputs,
            output:
                finetuning_outputs(name),
            log:
                logs("eval/{task}/{model}/{setting}.log"),
            wildcard_constraints:
                task=re.escape(name),
                setting=task_settings(name),
            conda:
                "../../../envs/torch.yaml"
            threads: 1
            resources:
                gpu=1,
            params:
                model=model_name_or_path,
                norm=model_norm,
                runs=finetuning_runs,
                # Bound now, as above: the task's kind's job script, run once a run.
                script=os.path.join(
                    workflow.basedir,
                    registry.kind_of(name, config["tasks"][name]).script,
                ),
            script:
                "../../scripts/finetuning.py"
