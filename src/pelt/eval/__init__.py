"""Evaluation of masked LMs with and without entity tables: the task runners (LAMA probing, FewRel,
Wiki80, the controls); their summaries and the report are :mod:`pelt.report`, which reads their results.
"""
