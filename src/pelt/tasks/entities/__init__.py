"""Your own entities, a task kind: a table for them, no evaluation (docs/own-entities.md); its reader
is :mod:`pelt.tasks.entities.data`."""
