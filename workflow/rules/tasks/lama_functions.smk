# LAMA's helpers: its config mapped to the paths and params of its rules (lama.smk includes this
# file first; common.smk holds what every kind shares).


def lama_inputs(wildcards):
    """Every variant reads a table: the baseline only for the frequency buckets, a control its
    control table (same ids and counts, other vectors). The variants that inject take L from the
    model's norm sweep where that chooses it (norm_sweep), as the fine-tuning runs do.
    """
    inputs = evaluation_inputs(
        wildcards, "lama", task_run_files("lama"), with_table=True
    )
    variant = wildcards.get("variant")
    if variant in ["pelt", *CONTROLS] and (sweep := norm_sweep(wildcards.model)):
        inputs["norm_sweep"] = sweep
    return variant_table(inputs, variant)


def lama_options(wildcards):
    """LAMA's settings as configured (pelt.registry, pelt.eval.settings.LamaSettings)."""
    return canonical(registry.settings_options("lama", config["tasks"]["lama"]))


def uhn_person_model():
    """What from_pretrained gets for LAMA-UHN's person-name filter (None: string filter only)."""
    name = lookup(dpath="tasks/lama/uhn/person_model", within=config, default=None)
    return results("models/demo") if name == "demo" else name


def uhn_model_input(wildcards):
    return (
        [results("models/demo")] if uhn_person_model() == results("models/demo") else []
    )
