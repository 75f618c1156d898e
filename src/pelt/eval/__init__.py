"""What the task runners (:mod:`pelt.tasks`) share, below them: the controls, the variant and its
norm L, frequency buckets and each task's settings; it imports no task. Their summaries and the
report are :mod:`pelt.report`, which reads their results.
"""
