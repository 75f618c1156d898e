"""What the task runners (:mod:`pelt.tasks`) share, below them: the controls, the variant and its
norm L (and which decides it), frequency buckets and each task's settings; it imports no task.
Their summaries and the report (each kind's in its package, the shared part :mod:`pelt.report`)
read their results.
"""
