# The rules template of the kinds fine-tuned per setting and seed whose runs have one shape (FewRel's,
# Wiki80's: their registry entries point their `rules` here, pelt.registry.FINETUNING_RULES, and the
# Snakefile includes it once). Each such kind gets one rule, named after it: one run per task of the
# kind, model, variant, setting and seed, by the kind's job script (its entry's `script`). Their
# summaries and figures are the fine-tuning kinds' (evaluation.smk, report.smk).


for kind in registry.kinds_with_rules(registry.FINETUNING_RULES):

    rule:
        name:
            kind.name
        input:
            unpack(finetuning_inputs),
        output:
            results("eval/{task}/{model}/{variant}/{setting}/seed{seed}.json"),
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
