"""The static build: the views (:mod:`fmbench.views`) rendered into a site, atomically and incrementally."""
