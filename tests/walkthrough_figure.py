"""A pytest plugin (``-p walkthrough_figure``) that adds a figure to the catalog before any test runs, as a
contributor following CONTRIBUTING's walk-through would: the entry's source text is in ``WALKTHROUGH_FIGURE``
and the figure it follows in ``WALKTHROUGH_AFTER``. ``tests/test_contributing_walkthrough.py`` runs tests with it."""

from __future__ import annotations

import os

import pytest

from fmbench.analysis import figure_catalog as fc


def added_figure(source: str) -> fc.Figure:
    """The ``Figure(...)`` entry as written in ``_FIGURES`` (its trailing comma too), evaluated where it is written."""
    figure = eval(source.strip().removesuffix(","), dict(vars(fc)))  # the repository's own text, not a user's
    assert isinstance(figure, fc.Figure)
    return figure


def pytest_configure(config: pytest.Config) -> None:
    figure = added_figure(os.environ["WALKTHROUGH_FIGURE"])
    fc.CATALOG = fc.CATALOG.with_figure(figure, after=os.environ["WALKTHROUGH_AFTER"])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line("catalog with the walk-through's figure: " + ", ".join(f.key for f in fc.CATALOG.figures))
