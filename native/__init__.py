"""Apple Evaluations artifacts (``.xcevalresult``) for FoundationModelsBench runs.

Read result documents (files, JSON Lines, exported folders), profile their
metrics, compare two results with optional gates, and write the
deterministic replay of a recorded run. The command group is
:data:`fmbench.native.cli.native`.
"""

from fmbench.errors import RunFileError

from .compare import (
    DEFAULT_DIRECTIONS,
    Comparison,
    GateOutcome,
    GateRule,
    MetricDelta,
    compare_evaluations,
    compare_files,
    evaluate_gate,
    pair_summaries,
    parse_gate,
)
from .document import parse_document
from .errors import ArtifactError, GateRuleError
from .manifest import Manifest, read_manifest
from .model import (
    Evaluation,
    ManifestEntry,
    MetricValue,
    Response,
    Row,
    SummaryMetric,
    looks_like_judge,
)
from .profiles import (
    MetricProfile,
    RationaleCount,
    median,
    profile_metric,
    profile_metrics,
    sample_variance,
)
from .reader import ReadResult, read_artifacts, read_evaluation, read_file
from .replay import REPLAY_METRICS, build_replay, replay_path, write_replay
from .reports import InspectionReport, SampleListing, comparison_text, inspect_path, list_samples

__all__ = [
    "DEFAULT_DIRECTIONS",
    "REPLAY_METRICS",
    "ArtifactError",
    "Comparison",
    "Evaluation",
    "GateOutcome",
    "GateRule",
    "GateRuleError",
    "InspectionReport",
    "Manifest",
    "ManifestEntry",
    "MetricDelta",
    "MetricProfile",
    "MetricValue",
    "RationaleCount",
    "ReadResult",
    "Response",
    "Row",
    "RunFileError",
    "SampleListing",
    "SummaryMetric",
    "build_replay",
    "compare_evaluations",
    "compare_files",
    "comparison_text",
    "evaluate_gate",
    "inspect_path",
    "list_samples",
    "looks_like_judge",
    "median",
    "pair_summaries",
    "parse_document",
    "parse_gate",
    "profile_metric",
    "profile_metrics",
    "read_artifacts",
    "read_evaluation",
    "read_file",
    "read_manifest",
    "replay_path",
    "sample_variance",
    "write_replay",
]
