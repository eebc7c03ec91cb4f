"""The catalog of per-scenario figures: each one defined once, and everything that shows one derived from it.

A :class:`Figure` says what it is (key, label, unit, the direction that is better), how it is worked out
from a scenario's trials (a rate of a 0/1 outcome, a mean, a nearest-rank quantile or a maximum of one
``trials`` column), where its value is stored (its ``scenario_figures`` column), where it is shown (the
table columns of run, scenario, device and build pages), how :mod:`fmbench.comparison.compare` compares it and whether
it is charted. The run, scenario, device and comparison columns, ``compare``'s figures, the PCC pages' speed
figures and the median-and-p90 charts all read :data:`CATALOG`; adding a figure is adding one entry
(:meth:`Catalog.with_figure` makes a catalog with one more, as a test does).

The figures' definitions (task success over attempts, completed prompt pass over trials, nearest-rank
quantiles) are those of :mod:`fmbench.analysis.figures`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from fmbench.analysis import display as d
from fmbench.analysis.figures import nearest_rank

Unit = Literal["rate", "score", "seconds", "tokens/s", "chars/s", "bytes"]
Better = Literal["higher", "lower"]
Statistic = Literal["rate", "mean", "quantile", "maximum"]
"""How a figure is worked out from its trials' values: a rate of 0/1 outcomes, a mean, a nearest-rank
quantile, a maximum."""
Compared = Literal["always", "for tokens", "never"]
"""Whether ``compare`` reports a figure: always, only in place of tokens/s when the sides' token counts are not
like for like (characters per second), or never (a figure of the pages only)."""
Table = Literal["run", "scenario", "device", "device-one-build", "build", "executed-model", "leaderboard"]
"""The scenario tables that show a figure as a column: a run's scenarios, a scenario's runs, a device's
configurations across builds (and measured on one build), an OS build's headline, a run's split by executed
model, a leaderboard's devices (each with its interval: only a figure with an interval belongs there)."""


def format_value(unit: str, value: float | None) -> str | None:
    """A figure's value as a reader sees it (``None``: not recorded)."""
    if unit in ("rate", "score"):
        return d.percent(value)
    if unit == "seconds":
        return d.seconds(value)
    if unit == "bytes":
        return d.mebibytes(value)
    return d.rate(value)


def signed(value: float, spec: str) -> str:
    """``value`` formatted with a sign (``spec`` such as ``+.3f``), but a change that rounds to zero unsigned: "0.000",
    never "-0.000" or "+0.000"."""
    text = format(value, spec)
    if text[:1] in "+-" and not any(c in "123456789" for c in text):
        return text[1:]
    return text


def format_change(unit: str, value: float) -> str:
    """A signed change of a figure (a delta, an interval's end): percentage points, seconds, MiB or a rate."""
    if unit in ("rate", "score"):
        return f"{signed(value * 100, '+.1f')} pp"
    if unit == "seconds":
        return f"{signed(value, '+.3f')} s"
    if unit == "bytes":
        return f"{signed(value / 2**20, '+,.0f')} MiB"
    return signed(value, "+.2f")


@dataclass(frozen=True)
class Metric:
    """A per-trial value whose distribution a run or scenario page shows in full (count, minimum, median, mean,
    p90, maximum and standard deviation per scenario, :func:`fmbench.analysis.figures.distribution`)."""

    key: str
    """The ``trials`` column that holds the value; absent values are ``NULL``, never 0."""
    label: str
    unit: Literal["seconds", "tokens/s", "chars/s", "bytes"]


@dataclass(frozen=True)
class Chart:
    """How a figure's metric is charted, median with a bar to p90, per scenario (or per run, per build)."""

    id: str
    """``ttft``: the charts' ids start with it."""
    name: str
    """``Time to first token``: a chart's title starts with it."""
    headline: str
    """``Median time to first token``: the title of a small chart of the medians alone."""
    axis: str
    """The value axis' title."""
    what: str
    """What a gap in the chart is not recorded for (``TTFT``)."""
    quantiles: tuple[str, str]
    """The keys of the median and the p90 figure the chart draws."""
    from_zero: bool = True
    """The value axis starts at zero (latency and throughput: a cut axis turns a small change into a jump)."""
    marks: str = "Dot: median; whisker: to the p90."
    """How to read the chart's marks: its caption under the title."""


@dataclass(frozen=True)
class DeltaChart:
    """A comparison's chart of one figure's change per scenario, with its interval."""

    figure: str
    """The key of the figure charted."""
    title: str
    axis: str
    """The value axis' title, short enough to fit a phone (a rate's change is in percentage points)."""
    marks: str = "Dot: candidate − baseline; whisker: its interval; dotted line: no change."
    """How to read the chart's marks (which side of zero is better, too): its caption."""


EVERY_CATEGORY = "*"
"""In :attr:`Figure.headline_of`: the headline figure of every category no other figure names."""


@dataclass(frozen=True)
class Figure:
    """One per-scenario figure: what it is, how it is worked out and compared, where it is stored and shown."""

    key: str
    """The figure's name in ``compare``'s output (text, Markdown, ``--json``)."""
    label: str
    """Its label in ``compare``'s output and on the comparison pages."""
    unit: Unit
    better: Better
    statistic: Statistic
    source: str
    """The ``trials`` column it is worked out from (a rate: the trial's 0/1 outcome); a NULL is not recorded."""
    q: float | None = None
    """A quantile figure's nearest-rank quantile."""
    over: Literal["attempts", "trials"] = "trials"
    """A rate's denominator: every attempt (a failed request counts as a 0) or the completed trials."""
    stored: str | None = None
    """The ``scenario_figures`` column that holds the figure per scenario (``None``: compared, never stored)."""
    column: str | None = None
    """The key of its column in the pages' scenario tables (``None``: no column)."""
    heading: str = ""
    """Its column's heading."""
    help: str | None = None
    """Its column's explanation (the heading's title)."""
    absent: str | None = None
    """Why a scenario has no value (shown in place of it), where there is one reason."""
    tables: frozenset[Table] = frozenset()
    """The scenario tables that show it as a column."""
    speed: bool = False
    """Latency, throughput or memory: never compared across routes; a PCC side's is the PCC-executed trials'."""
    compared: Compared = "always"
    tokens: bool = False
    """Its values are tokens counted by the trials' token count source: not like for like between a counted
    and an estimated side."""
    headline_of: frozenset[str] = frozenset()
    """The workload categories whose leaderboards rank by this figure by default (:data:`EVERY_CATEGORY`: every
    category no other figure names); a reader can re-rank by any other."""

    def __post_init__(self) -> None:
        if (self.statistic == "quantile") != (self.q is not None):
            raise ValueError(f"figure {self.key}: a quantile figure, and only one, has a quantile q")

    @property
    def attempts(self) -> bool:
        """A figure over attempts (trials and measured failures): it exists when every request failed."""
        return self.statistic == "rate" and self.over == "attempts"

    @property
    def series(self) -> str:
        """The name of the values the figure is worked out from, as ``compare`` groups them: the source column,
        and for a rate over attempts the attempts' outcomes (failures count as 0)."""
        return f"{self.source}/attempts" if self.attempts else self.source

    def of(self, values: Sequence[float]) -> float | None:
        """The figure of a scenario's recorded values of its source (for a rate over attempts, a failure's 0
        included): ``None`` when there are none."""
        if not values:
            return None
        if self.statistic in ("rate", "mean"):
            return sum(values) / len(values)
        if self.statistic == "maximum":
            return max(values)
        return nearest_rank(sorted(values), self.q or 0.0)

    def format(self, value: float | None) -> str | None:
        return format_value(self.unit, value)


_SPEED_TABLES: frozenset[Table] = frozenset({"run", "scenario", "device", "executed-model"})

_FIGURES: tuple[Figure, ...] = (
    Figure("task_success", "Task success", "rate", "higher", "rate", "task_passed", over="attempts",
           stored="task_success", column="task", heading="Task success",
           help="Task-passed trials / (trials + failures)",
           tables=frozenset({"run", "scenario", "device", "device-one-build", "build", "leaderboard"})),
    Figure("prompt_pass", "Completed prompt pass", "rate", "higher", "rate", "task_passed",
           stored="prompt_pass_rate", column="prompt", heading="Completed prompt pass",
           help="Task-passed trials / completed trials", absent="no completed trial",
           tables=frozenset({"run", "scenario", "device"})),
    # Failures are rows of their own (no trial column holds them): stored at ingest, shown, never compared.
    Figure("failure_rate", "Failure rate", "rate", "lower", "rate", "failed", over="attempts",
           stored="failure_rate", column="failure", heading="Failure rate", tables=frozenset({"run"}),
           compared="never"),
    Figure("constraint_score", "Mean constraint score", "score", "higher", "mean", "constraint_score",
           stored="mean_constraint_score", column="constraint", heading="Constraint score",
           help="Mean over trials that have checks", absent="no trial in this scenario has checks",
           tables=frozenset({"run", "scenario"})),
    Figure("ttft_median", "Median TTFT", "seconds", "lower", "quantile", "time_to_first_token", q=0.5,
           stored="ttft_median", column="ttft50", heading="TTFT median", speed=True,
           tables=_SPEED_TABLES | {"device-one-build", "build", "leaderboard"}, headline_of=frozenset({EVERY_CATEGORY})),
    Figure("ttft_p90", "p90 TTFT", "seconds", "lower", "quantile", "time_to_first_token", q=0.9,
           stored="ttft_p90", column="ttft90", heading="TTFT p90", speed=True, tables=_SPEED_TABLES | {"leaderboard"}),
    Figure("tps_median", "Median output tokens/s", "tokens/s", "higher", "quantile", "output_tokens_per_second",
           q=0.5, stored="tps_median", column="tps50", heading="Output tok/s median", speed=True, tokens=True,
           tables=_SPEED_TABLES | {"device-one-build", "build", "leaderboard"},
           headline_of=frozenset({"syntheticThroughput"})),
    Figure("tps_p90", "p90 output tokens/s", "tokens/s", "higher", "quantile", "output_tokens_per_second", q=0.9,
           stored="tps_p90", column="tps90", heading="Output tok/s p90", speed=True, tokens=True,
           tables=_SPEED_TABLES),
    Figure("peak_memory", "Peak memory (max of peak resident)", "bytes", "lower", "maximum", "peak_memory_bytes",
           stored="memory_max", column="mem", heading="Peak memory",
           help="Highest resident memory sampled across trials", speed=True,
           tables=_SPEED_TABLES | {"device-one-build"}),
    Figure("cps_median", "Median output characters/s", "chars/s", "higher", "quantile", "output_chars_per_second",
           q=0.5, speed=True, compared="for tokens"),
    Figure("cps_p90", "p90 output characters/s", "chars/s", "higher", "quantile", "output_chars_per_second",
           q=0.9, speed=True, compared="for tokens"),
)

_DELTA_CHARTS: tuple[DeltaChart, ...] = (
    DeltaChart("ttft_median", "Change in median TTFT", "Change (s)",
               "Dot: candidate − baseline (left of zero is faster); whisker: its interval; dotted line: no change."),
    DeltaChart("tps_median", "Change in median output tokens/s", "Change (tokens/s)",
               "Dot: candidate − baseline (right of zero is faster); whisker: its interval; dotted line: no change."),
    DeltaChart("task_success", "Change in task success", "Change (pp)",
               "Dot: candidate − baseline in percentage points (right of zero is better); whisker: its interval; "
               "dotted line: no change."),
)

_METRICS: tuple[Metric, ...] = (
    Metric("duration", "Duration", "seconds"),
    Metric("time_to_first_token", "Time to first token", "seconds"),
    Metric("output_tokens_per_second", "Output tokens per second", "tokens/s"),
    Metric("output_chars_per_second", "Output characters per second", "chars/s"),
    Metric("maximum_stream_update_gap", "Largest stream update gap", "seconds"),
    Metric("peak_memory_bytes", "Peak observed memory", "bytes"),
)

_CHARTS: tuple[Chart, ...] = (
    Chart("ttft", "Time to first token", "Median time to first token", "Seconds", "TTFT",
          ("ttft_median", "ttft_p90"), marks="Dot: median; whisker: to the p90. Lower is faster; the axis starts at 0."),
    Chart("tps", "Output tokens per second", "Median output tokens/s", "Tokens/s",
          "Output tokens per second", ("tps_median", "tps_p90"),
          marks="Dot: median; whisker: to the p90. Higher is faster; the axis starts at 0."),
)


@dataclass(frozen=True)
class Catalog:
    """The figures, in the order every table, output and chart lists them."""

    figures: tuple[Figure, ...]
    charts: tuple[Chart, ...] = ()
    metrics: tuple[Metric, ...] = ()
    """The per-trial values whose distributions the pages show in full."""
    delta_charts: tuple[DeltaChart, ...] = ()
    """The changes a comparison page charts, in order."""
    _by_key: dict[str, Figure] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_key = {f.key: f for f in self.figures}
        if len(by_key) != len(self.figures):
            raise ValueError("two figures of the catalog have one key")
        columns = [f.column for f in self.figures if f.column]
        if len(set(columns)) != len(columns):
            raise ValueError("two figures of the catalog have one column")
        object.__setattr__(self, "_by_key", by_key)

    def __getitem__(self, key: str) -> Figure:
        return self._by_key[key]

    def with_figure(self, figure: Figure, *, after: str | None = None) -> Catalog:
        """This catalog with one figure more, after the figure ``after`` (else last)."""
        at = len(self.figures) if after is None else self.figures.index(self[after]) + 1
        return replace(self, figures=(*self.figures[:at], figure, *self.figures[at:]))

    def compared(self, *, for_tokens: bool = False) -> tuple[Figure, ...]:
        """What ``compare`` reports per scenario; ``for_tokens``: with the figures compared in place of tokens/s."""
        wanted = ("always", "for tokens") if for_tokens else ("always",)
        return tuple(f for f in self.figures if f.compared in wanted)

    def column(self, key: str) -> Figure:
        """The figure shown in the column ``key``."""
        return next(f for f in self.figures if f.column == key)

    def columns(self, table: Table) -> tuple[str, ...]:
        """The column keys of the figures a table shows, in catalog order."""
        return tuple(f.column for f in self.figures if table in f.tables and f.column)

    def stored_speed(self) -> tuple[Figure, ...]:
        """The stored latency, throughput and memory figures (a PCC page's, from the PCC-executed trials)."""
        return tuple(f for f in self.figures if f.speed and f.stored)

    def quantiles(self, source: str) -> tuple[float, ...]:
        """The quantiles the compared figures take of one source, in catalog order (resampled together)."""
        return tuple(
            f.q for f in self.compared(for_tokens=True) if f.source == source and f.q is not None
        )

    def headline(self, category: str | None) -> Figure:
        """The figure a workload of ``category`` is ranked by on its leaderboard and named by on home: the one whose
        :attr:`~Figure.headline_of` names the category, else the one that stands for every category."""
        named = [f for f in self.figures if category is not None and category in f.headline_of]
        return named[0] if named else next(f for f in self.figures if EVERY_CATEGORY in f.headline_of)

    def metric(self, key: str) -> Metric:
        return next(m for m in self.metrics if m.key == key)

    def charted_metrics(self) -> tuple[Metric, ...]:
        """The metrics the charts draw (their trials, too, are charted), in metric order."""
        sources = {self.charted(c)[0].source for c in self.charts}
        return tuple(m for m in self.metrics if m.key in sources)

    def chart(self, chart_id: str) -> Chart:
        return next(c for c in self.charts if c.id == chart_id)

    def charted(self, chart: Chart) -> tuple[Figure, Figure]:
        """The median and the p90 figure a chart draws."""
        return self[chart.quantiles[0]], self[chart.quantiles[1]]


CATALOG = Catalog(_FIGURES, _CHARTS, _METRICS, _DELTA_CHARTS)
"""Every figure fmbench shows. Read it where it is used (``figure_catalog.CATALOG``), never copied at import:
a test that adds a figure replaces it."""
