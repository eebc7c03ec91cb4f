"""Files as the benchmark's runner writes them are read whole: every shape it can write, nothing dropped.

Each test reads a file written for it (tests/data/june and tests/data/reading,
made by tests/data/make_reading_files.py in the runner's own JSON layout).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fmbench import urls
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.report import summary_json, text_summary
from fmbench.analysis.run import analyze_bytes, analyze_file
from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.ingest.validate import validate_paths
from fmbench.publish.build import build_site
from fmbench.runfile.reader import detect_generation
from fmbench.runfile.record import run_id_for
from fmbench.serving.serve import create_app
from fmbench.storage.db import connect, migrations
from fmbench.views.data import trial_rows, trials_csv_text

from testdata import DATA, EXAMPLE_NAME, EXAMPLES, RUNS

READING = DATA / "reading"
JUNE_PCC = DATA / "june" / "macbook-pro-m5-macos27-26A5353q-pcc-quick-2026-06-12.json"
HOST = {"Host": "127.0.0.1:8000"}


def run_id(path: Path) -> str:
    return run_id_for(hashlib.sha256(path.read_bytes()).hexdigest())


def page_text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The reading files and the June PCC attempt in one database, and the site built from it."""
    root = tmp_path_factory.mktemp("reading")
    db = root / "reading.duckdb"
    report = ingest_paths([READING, JUNE_PCC], db)
    assert report.ok, [o.message for o in report.outcomes if o.status == "error"]
    build_site(db, root / "site")
    return db, root / "site"


def built(site: tuple[Path, Path], url: str) -> str:
    path = site[1] / url.lstrip("/")
    if url.endswith(".gz"):  # the site's data files are stored gzipped
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    return (path / "index.html" if url.endswith("/") else path).read_text(encoding="utf-8")


def api(site: tuple[Path, Path], path: str) -> tuple[dict, str]:
    response = create_app(site[0], host="127.0.0.1", port=8000).test_client().get(path, headers=HOST)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json(), response.get_data(as_text=True)


# --- the generation, and a run whose every request failed -------------------------------------


def test_a_june_pcc_attempt_with_no_trial_is_read_as_legacy_and_judged_exploratory_not_invalid() -> None:
    a = analyze_file(JUNE_PCC)
    assert a.record.generation == "legacy"
    assert a.record.trials == [] and len(a.record.measured_failures) == 1
    assert a.record.environment.foundationModelsBenchCommit == "1d8d492"  # written as appBenchCommit
    assert a.record.flags == []  # appBenchCommit is known, not an unknown key
    assert a.verdict.level == "exploratory"
    assert "no-measured-trial" in [r.code for r in a.verdict.reasons]
    assert a.mismatches == []
    (fig,) = a.figures
    assert (fig.task_success, fig.failure_rate, fig.prompt_pass_rate) == (0.0, 1.0, None)
    assert fig.time_to_first_token.count == 0 and fig.time_to_first_token.median is None
    row = text_summary(a).splitlines()[-1].split("  ")
    assert [c for c in row if c] == ["task-capture", "0.0%", "no measured trial", "100.0%", *["no measured trial"] * 5]


def test_the_june_pcc_attempts_markdown_is_the_runners_own() -> None:
    result = CliRunner().invoke(main, ["summarize", "--markdown", str(JUNE_PCC)])
    assert result.exit_code == 0
    assert result.output == JUNE_PCC.with_suffix(".md").read_text(encoding="utf-8")


def test_a_current_run_whose_every_request_failed_is_exploratory_with_its_warmup_failure_outside_the_rates() -> None:
    a = analyze_file(READING / "all-failed-current.json")
    assert a.record.generation == "current"
    assert a.verdict.level == "exploratory"
    assert "no-measured-trial" in [r.code for r in a.verdict.reasons]
    assert not [r for r in a.verdict.reasons if r.level == "invalid"]
    assert [f.scenario_id for f in a.figures] == ["task-capture", "journal-summary"]
    assert all(f.failure_count == 1 and f.failure_rate == 1.0 and f.task_success == 0.0 for f in a.figures)
    assert a.mismatches == []


def test_the_generation_comes_from_top_level_keys_never_from_trials_or_nested_keys() -> None:
    legacy = JUNE_PCC.read_bytes()
    assert detect_generation(legacy) == "legacy"
    nested = legacy.replace(b'"iteration" : 1,', b'"iteration" : 1,\n      "sessionMode" : "cold",', 1)
    assert nested != legacy and detect_generation(nested) == "legacy"
    current = (READING / "all-failed-current.json").read_bytes()
    assert detect_generation(current) == "current"
    only_connectivity = current.replace(b'"sessionMode" : "cold",', b"", 1)
    assert detect_generation(only_connectivity) == "current"


def test_app_bench_commit_is_the_benchmark_commit_at_the_top_and_on_every_trial() -> None:
    data = (RUNS / "purpose-current.json").read_bytes().replace(b'"foundationModelsBenchCommit"', b'"appBenchCommit"')
    record = analyze_bytes(data, "renamed.json").record
    assert record.environment.foundationModelsBenchCommit == "c5e90f3"
    assert {t.environment.foundationModelsBenchCommit for t in record.trials if t.environment} == {"c5e90f3"}
    assert not [p for p in record.flags if "appBenchCommit" in p.where]


def test_an_all_failed_run_page_says_no_measured_trial_and_shows_attempt_figures_and_failures(site) -> None:
    text = page_text(built(site, f"/runs/{run_id(JUNE_PCC)}/"))
    start = text.index("Scenarios: quality")  # after the conditions at a glance
    scenarios = text[start : text.index("Conditions", start)]
    assert "Natural-language task capture 1 0.0% no measured trial 100.0% no measured trial" in scenarios
    # Every figure of the run table but those over attempts (a failure counts there), and the token count source.
    over_trials = [c for c in fc.CATALOG.columns("run") if not fc.CATALOG.column(c).attempts]
    assert {"prompt", "ttft50", "tps50", "mem"} <= set(over_trials)
    assert scenarios.count("no measured trial") == len(over_trials) + 1
    assert " s " not in scenarios.replace("tok/s", "")  # no 0 s anywhere
    assert "GenerationError error 2." in text
    assert "Session mode not recorded" in text and "Reasoning level not recorded" in text
    assert "No measured trial" in text  # the verdict banner names the reason


def test_ingest_of_the_published_example_and_the_june_pcc_attempt_exits_zero(tmp_path: Path) -> None:
    example = EXAMPLES / f"{EXAMPLE_NAME}.json"
    folder = tmp_path / "june"
    folder.mkdir()
    shutil.copy(example, folder)
    shutil.copy(JUNE_PCC, folder)
    result = CliRunner().invoke(main, ["ingest", str(folder), "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 0, result.output
    assert "2 ingested" in result.output and "0 errored" in result.output


# --- edge cases the runner can write ----------------------------------------------------------


def test_a_summary_of_a_scenario_with_no_trials_and_no_failures_is_not_a_mismatch(site) -> None:
    path = READING / "empty-scenario.json"
    a = analyze_file(path)
    assert [s.id for s in a.record.summaries] == ["task-capture", "journal-summary", "habit-classification"]
    assert [f.scenario_id for f in a.figures] == ["task-capture"]
    assert a.mismatches == []
    assert a.verdict.level == "exploratory"
    edited = path.read_bytes().replace(b'"trialCount" : 0', b'"trialCount" : 2', 1)
    assert [m.field for m in analyze_bytes(edited, "edited.json").mismatches] == ["(scenario)"]
    page = page_text(built(site, f"/runs/{run_id(path)}/"))
    assert "Configured but not run (the file's summaries hold them with no trial and no failure): journal-summary , habit-classification ." in page


def test_a_negative_gap_duration_and_ttft_are_kept_flagged_and_shown(site) -> None:
    path = READING / "clock-step.json"
    a = analyze_file(path)
    assert a.record.trials[0].metrics.maximumStreamUpdateGap == -0.75
    assert a.figures[0].duration.minimum == -2.5 and a.figures[0].time_to_first_token.minimum == -2.9
    assert [p.where for p in a.record.flags] == [
        "trials[0].metrics.maximumStreamUpdateGap",
        "trials[1].metrics.duration",
        "trials[1].metrics.timeToFirstToken",
    ]
    assert a.mismatches == []
    (checked,) = validate_paths([path])
    assert "stream update gap -0.75 s is negative" in checked.describe()
    page = page_text(built(site, f"/runs/{run_id(path)}/"))
    assert "Flagged: kept as data" in page and "stream update gap -0.75 s is negative" in page
    # laid out by trials.js from the trial data: the text it shows is the data's
    trials = built(site, f"/data/runs/{run_id(path)}/trials/task-capture.json.gz")
    assert "-0.750 s (negative: a wall-clock step, kept as recorded)" in trials


def test_counts_above_32_bits_are_stored_exactly(site) -> None:
    rid = run_id(READING / "wide-counts.json")
    with duckdb.connect(str(site[0]), read_only=True) as con:
        run = con.execute("SELECT model_context_size, random_seed FROM runs WHERE run_id = ?", [rid]).fetchone()
        trial = con.execute(
            "SELECT input_token_count, output_token_count, stream_update_count FROM trials WHERE run_id = ?", [rid]
        ).fetchone()
        kinds = dict(con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'runs'"
        ).fetchall())
    assert run == (4_294_967_296, 2**53 + 1)
    assert trial == (2_147_483_653, 3_000_000_004, 4_294_967_303)
    assert kinds["repetitions"] == kinds["trial_count"] == "BIGINT"


def test_a_database_of_the_32_bit_schema_migrates_to_wide_counts(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE fmbench_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)")
    for m in migrations()[:2]:
        con.execute(m.sql)
        con.execute("INSERT INTO fmbench_migrations VALUES (?, ?, now()::TIMESTAMP)", [m.version, m.name])
    assert con.execute("SELECT data_type FROM information_schema.columns WHERE table_name = 'runs' "
                       "AND column_name = 'model_context_size'").fetchone() == ("INTEGER",)
    con.close()
    report = ingest_paths([READING / "wide-counts.json"], db)
    assert report.ok, [o.message for o in report.outcomes]
    with connect(db, read_only=True) as con:
        assert con.execute("SELECT model_context_size FROM runs").fetchone() == (4_294_967_296,)


def test_a_seed_above_2_53_reaches_the_browser_as_a_string(site) -> None:
    rid = run_id(READING / "wide-counts.json")
    figures_text = built(site, f"/data/runs/{rid}/figures.json")
    assert json.loads(figures_text)["run"]["random_seed"] == "9007199254740993"
    assert "9007199254740993," not in figures_text
    one, _ = api(site, f"/api/runs/{rid}")
    assert one["run"]["random_seed"] == "9007199254740993"
    listing, text = api(site, "/api/runs")
    assert {r["run_id"]: r["random_seed"] for r in listing["runs"]}[rid] == "9007199254740993"
    assert not re.search(r":\s*9007199254740993\b", text)


# --- scenario order --------------------------------------------------------------------------


ORDER = ["task-capture", "journal-summary", "habit-classification", "visual-recommendation"]
TITLES = ["Natural-language task capture", "Journal summary", "Habit category classification", "Visual recommendation"]


def _in_order(text: str, names: list[str]) -> bool:
    places = [text.index(n) for n in names]
    return places == sorted(places)


def test_one_runs_scenarios_follow_the_files_summaries_order_in_every_output(site) -> None:
    path = READING / "scenario-order.json"
    a = analyze_file(path)
    assert a.record.trials[0].scenario_id == "habit-classification"  # ran shuffled
    assert [f.scenario_id for f in a.figures] == ORDER
    assert [s["id"] for s in summary_json(a)["scenarios"]] == ORDER
    table = text_summary(a).split("\n\n", 1)[1].splitlines()[1:]
    assert [line.split()[0] for line in table] == ORDER
    markdown = CliRunner().invoke(main, ["summarize", "--markdown", str(path)]).output
    assert _in_order(markdown, TITLES)
    rid = run_id(path)
    page = page_text(built(site, f"/runs/{rid}/"))
    assert _in_order(page[page.index("Scenarios: quality") :], TITLES)
    assert [s["scenario_id"] for s in json.loads(built(site, f"/data/runs/{rid}/figures.json"))["scenarios"]] == ORDER


def test_pages_spanning_runs_use_the_newest_runs_order_with_what_it_lacks_appended(tmp_path: Path) -> None:
    older = json.loads((READING / "scenario-order.json").read_text(encoding="utf-8"))
    newer = json.loads((READING / "scenario-order.json").read_text(encoding="utf-8"))
    newer["startedAt"], newer["endedAt"] = "2026-11-04T09:00:00Z", "2026-11-04T09:10:00Z"
    newer["environment"]["systemBuild"] = "26A5380a"
    newer["summaries"] = [s for s in reversed(newer["summaries"]) if s["id"] != "journal-summary"]
    newer["trials"] = [t for t in newer["trials"] if t["scenarioID"] != "journal-summary"]
    (tmp_path / "older.json").write_text(json.dumps(older), encoding="utf-8")
    (tmp_path / "newer.json").write_text(json.dumps(newer), encoding="utf-8")
    db = tmp_path / "two.duckdb"
    assert ingest_paths([tmp_path / "older.json", tmp_path / "newer.json"], db).ok
    build_site(db, tmp_path / "site")
    expected = ["visual-recommendation", "habit-classification", "task-capture", "journal-summary"]
    scenarios = page_text(built((db, tmp_path / "site"), urls.scenarios()))
    assert _in_order(scenarios, expected)
    device = page_text(built((db, tmp_path / "site"), urls.device("Mac17,2")))
    table = device[device.index("quality and latency per OS build") :]
    assert _in_order(table, ["Visual recommendation", "Habit category classification", "Natural-language task capture", "Journal summary"])


# --- nothing the file holds is dropped ---------------------------------------------------------


def test_offline_success_visual_fixture_and_a_trials_own_environment_are_on_the_trial_page_and_in_its_data(site) -> None:
    rid = run_id(READING / "kept-fields.json")
    assert "Offline success 1 of 2 trials" in page_text(built(site, f"/runs/{rid}/"))
    # the trial page's trials are laid out by trials.js from the trial data (tests/test_real_files_browser.py shows
    # them there): the data holds each field as the page shows it
    html = built(site, f"/runs/{rid}/trials/visual-recommendation/")
    assert f"/data/runs/{rid}/trials/visual-recommendation.json.gz" in html
    data = json.loads(built(site, f"/data/runs/{rid}/trials/visual-recommendation.json.gz"))
    (trial,) = trial_rows(data)
    assert (trial["offline_success"], trial["visual_fixture"]) == ("yes", "sunsetRun")
    assert trial["environment"] == {
        "Low Power Mode": "on", "Thermal state": "Fair", "Snapshot taken (UTC)": "2026-11-03T09:04:31Z"
    }
    with duckdb.connect(str(site[0]), read_only=True) as con:
        csv_text = trials_csv_text(con, rid)  # what `fmbench export --trials-csv` writes
    header = csv_text.splitlines()[0].split(",")
    row = dict(zip(header, csv_text.splitlines()[1].split(","), strict=False))
    assert (row["offline_success"], row["visual_fixture"], row["environment_low_power_mode"]) == ("True", "sunsetRun", "True")


def test_a_failures_tool_calls_and_final_state_are_on_the_run_page_and_in_the_data_files(site) -> None:
    rid = run_id(READING / "kept-fields.json")
    page = page_text(built(site, f"/runs/{rid}/"))
    assert ("searchContacts(query: Dr. Lee) → createReminder(list: Personal, title: Call Dr. Lee) "
            "reminders.count = 0; reminders.latest.title = none") in page
    data = json.loads(built(site, f"/data/runs/{rid}/trials/personal-organizer.json.gz"))
    (failure,) = data["failures"]
    assert [c["name"] for c in failure["tool_calls"]] == ["searchContacts", "createReminder"]
    assert failure["tool_calls"][1]["arguments"] == {"list": "Personal", "title": "Call Dr. Lee"}
    assert failure["final_state"] == [
        {"key": "reminders.count", "value": "0"}, {"key": "reminders.latest.title", "value": "none"}
    ]
    served, _ = api(site, f"/api/runs/{rid}/scenarios/personal-organizer/trials")
    assert served["failures"] == data["failures"]


def test_quota_detail_is_in_summarize_json_and_on_the_run_and_pcc_pages(site) -> None:
    path = READING / "all-failed-current.json"
    result = CliRunner().invoke(main, ["summarize", "--json", str(path)])
    assert result.exit_code == 0
    quota = json.loads(result.output)["run"]["quotaBefore"]
    assert quota == {"status": "belowLimit", "isApproachingLimit": True, "isLimitReached": False,
                     "resetDate": "2026-11-04T00:00:00Z"}
    expected = "Below limit; approaching the limit: yes; limit reached: no; resets 2026-11-04T00:00:00Z"
    assert expected in page_text(built(site, f"/runs/{run_id(path)}/"))
    assert expected in page_text(built(site, "/pcc/"))


# --- the benchmark's own published files on the home page -------------------------------------------


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The published example run and the June PCC attempt (both exploratory), and the site built from them."""
    root = tmp_path_factory.mktemp("examples")
    db = root / "examples.duckdb"
    assert ingest_paths([EXAMPLES, JUNE_PCC], db).ok
    build_site(db, root / "site")
    return db, root / "site"


def test_the_home_page_shows_the_published_exploratory_runs_figures_labelled_and_unranked(examples) -> None:
    html = built(examples, "/")
    text = page_text(html)
    assert "No device has a publishable run yet" not in text
    assert "Newest figures of each device" in text and "MacBook Pro M5 (Mac17,2)" in text
    # the example's headline figures per workload, in its file's order (task capture first, as the runner ran it)
    for figure in ("Natural-language task capture 100.0% 0.417 s 74.55", "Stacked notification summary 100.0% 0.373 s 94.31",
                   "Grounded document question answering 100.0% 0.436 s 75.49"):
        assert figure in text
    assert text.index("Natural-language task capture 100.0%") < text.index("Grounded document question answering 100.0%")
    assert text.count("exploratory: shown, never ranked") == 2  # the on-device run and the PCC attempt, each labelled
    assert "older run-file format" in text and "legacy format" not in text
    assert "Private Cloud Compute · Practical Quick · older run-file format" in text
    assert "plotly" not in html  # figures as text: no chart library on the home page


def test_the_example_run_page_counts_its_samples_and_states_its_conditions_at_a_glance(examples) -> None:
    text = page_text(built(examples, f"/runs/{run_id(EXAMPLES / (EXAMPLE_NAME + '.json'))}/"))
    assert "Samples per scenario 1 (counted from the trials: 5 samples in 5 scenarios;" in text
    assert "Samples per scenario not recorded" not in text
    glance = text.split("Conditions at a glance", 1)[1].split("Every condition", 1)[0]
    assert " ".join(glance.split()) == (
        "Device MacBook Pro M5 (Mac17,2) OS version and build macOS 27.0.0, build 26A5353q Route On-device "
        "Session not recorded Suite Practical Quick Suite revision 2026.06 (superseded) Trials 25 measured trials "
        "Warmups 1 Repetitions 5"
    )
    assert text.index("Conditions at a glance") < text.index("Scenarios: quality")
    assert "Fixture version fx-9eaf0c76e1051aad" in text and "Run-file format older run-file format (June 2026)" in text


def test_the_june_pcc_attempts_failure_of_no_recorded_kind_is_counted_in_words(examples) -> None:
    html = built(examples, "/pcc/")
    assert "<td>1 failure of a kind the file does not record</td>" in html
    assert "<td>not recorded 1</td>" not in html  # a kind called "not recorded" with a count after it


def test_the_home_page_of_an_empty_database_says_so_over_flask(tmp_path: Path) -> None:
    from fmbench.ingest import writable
    from fmbench.views.home import NO_RUN

    db = tmp_path / "empty.duckdb"
    with writable(db):
        pass
    client = create_app(db, host="127.0.0.1", port=8000).test_client()
    response = client.get("/", headers=HOST)
    assert response.status_code == 200
    text = page_text(response.get_data(as_text=True))
    assert NO_RUN in text and "0 runs" in text
    runs = page_text(client.get("/runs/", headers=HOST).get_data(as_text=True))
    assert "No runs yet." in runs and "No run matches these filters." not in runs
