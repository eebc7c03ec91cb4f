"""Analysis of runs: every figure recomputed from the trials, the verdicts, the revisions and the intervals.

Reads run files (:mod:`fmbench.runfile`); knows nothing of storage or pages.
"""
