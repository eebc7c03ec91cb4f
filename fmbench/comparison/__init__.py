"""Comparisons: which runs a side means, whether two sides may be compared, their intervals and regressions.

Reads the database (:mod:`fmbench.storage`) and the figures (:mod:`fmbench.analysis`).
"""
