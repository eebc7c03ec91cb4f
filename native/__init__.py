"""Apple Evaluations artifacts (``.xcevalresult``) for FoundationModelsBench runs.

Read result documents (files, JSON Lines, exported folders), profile their
metrics as xceval does, report failed rows and differences from Expected,
validate, list and convert documents, compare two results with optional
gates, run xceval pipeline manifests, and write the deterministic replay of
a recorded run. The command group is
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
from .differences import Difference, RowIssues, differences, evaluation_issues
from .document import parse_document
from .errors import ArtifactError, GateRuleError, PipelineError
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
from .pipeline import load_pipeline, run_pipeline
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
from .reports import (
    InspectionReport,
    SampleListing,
    comparison_text,
    inspect_path,
    list_samples,
    report_path,
    stream_samples,
)
from .result_sets import convert, list_results
from .validation import validate_paths

__all__ = [
    "DEFAULT_DIRECTIONS",
    "REPLAY_METRICS",
    "ArtifactError",
    "Comparison",
    "Difference",
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
    "PipelineError",
    "RationaleCount",
    "ReadResult",
    "Response",
    "Row",
    "RowIssues",
    "RunFileError",
    "SampleListing",
    "SummaryMetric",
    "build_replay",
    "compare_evaluations",
    "compare_files",
    "comparison_text",
    "convert",
    "differences",
    "evaluate_gate",
    "evaluation_issues",
    "inspect_path",
    "list_results",
    "list_samples",
    "load_pipeline",
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
    "report_path",
    "run_pipeline",
    "sample_variance",
    "stream_samples",
    "validate_paths",
    "write_replay",
]
