"""Fuzz the run-file reader with atheris (libFuzzer): only RunFileError may escape.

Run it by hand for as long as you like:

    python tests/fuzz/fuzz_run_reader.py CORPUS_DIR -max_total_time=600

tests/test_fuzz.py runs it for a few seconds in the normal suite, on a copy of
the seed corpus (libFuzzer adds the inputs it finds interesting to that folder).
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["fmbench"]):
    from fmbench.analysis.run import analyze_bytes
    from fmbench.errors import RunFileError


def test_one_input(data: bytes) -> None:
    """Read and judge ``data`` as a run file: accepted, or refused with fmbench's own error."""
    try:
        analysis = analyze_bytes(data, "fuzz.json")
    except RunFileError as exc:
        if not (exc.problems and str(exc).startswith("fuzz.json: ")):
            raise AssertionError(f"a refusal that names no file or place: {exc!r}") from None
        return
    for figures in analysis.figures:  # an accepted file has figures a page can show
        assert figures.trial_count + figures.failure_count > 0


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
