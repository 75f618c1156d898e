"""Evaluation of masked LMs with and without entity tables (LAMA probing; summaries)."""
