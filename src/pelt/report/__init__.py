"""The report: what the task kinds' summaries and figures share (each kind's own are in its package,
``pelt.tasks.<kind>.summary`` and ``.figures``, which use these helpers), the report's pages and
figures that gather every kind's part through the registry (the landing page, the README's table),
and flags on results that measure nothing. It reads what the task runners wrote; no module here
names a task kind, and the runners never import it.
"""
