"""Your own entities, a task kind: a table for them, no evaluation (docs/own-entities.md); its reader
is :mod:`pelt.tasks.entities.data`, and here its registry entry (pure Python: the Snakefile imports it)."""

from pelt.registry import TaskKind, register

KIND = register(
    TaskKind(
        "entities",
        schema="workflow/schemas/tasks/entities.yaml",
        data_keys=("entities",),
        file_keys=("entities",),
        runner=None,
        entity_reader="pelt.tasks.entities.data:listed_entities",
        reader_keys=("column", "qid_column"),
        prefix="entities_",  # more than one list (another domain, another layout): entities_<name>
        end_of_run="pelt.tasks.entities.data:found_lines",
    )
)
