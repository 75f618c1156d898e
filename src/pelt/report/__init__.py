"""The report: summaries of the tasks' results in the paper's layout, the report's pages and figures,
and flags on results that measure nothing. It reads what :mod:`pelt.tasks` wrote; the tasks never
import it.
"""
