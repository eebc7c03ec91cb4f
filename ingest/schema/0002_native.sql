-- fmbench schema, migration 2: Apple Evaluations result documents (.xcevalresult) beside the runs.
-- One document is one file, or one line of a JSON Lines file. evaluation_key is the SHA-256 of
-- the file's bytes, followed by ":<line>" for a JSON Lines document; the same bytes land once.
-- Unknown keys and columns are kept as JSON in extra_json: a later format version loses nothing.

CREATE TABLE evaluations (
    evaluation_key        VARCHAR PRIMARY KEY,
    sha256                VARCHAR NOT NULL,
    line                  INTEGER,
    file_name             VARCHAR NOT NULL,
    evaluation_id         VARCHAR,
    result_id             VARCHAR,
    start_time            VARCHAR,
    end_time              VARCHAR,
    duration_ms           DOUBLE,
    info_json             VARCHAR NOT NULL,
    report_metadata_json  VARCHAR NOT NULL,
    extra_json            VARCHAR,
    -- evaluationInfo "Source SHA-256": the run file a replay was written from, when it says so.
    source_run_sha256     VARCHAR,
    test_identifier       VARCHAR,
    attachment_name       VARCHAR,
    -- Subjective model-judge scores: secondary evidence, always shown apart.
    is_judge              BOOLEAN NOT NULL,
    row_count             INTEGER NOT NULL,
    -- The document's original bytes: the whole file, or that one line of a JSON Lines file.
    content               BLOB NOT NULL,
    ingested_at           TIMESTAMP NOT NULL
);

CREATE TABLE evaluation_rows (
    evaluation_key   VARCHAR NOT NULL,
    row_index        INTEGER NOT NULL,
    -- The Input column decoded a second time, and the benchmark's recordID inside it.
    input_json       VARCHAR,
    record_id        VARCHAR,
    response_type    VARCHAR,
    -- The Response column as written ({"typeName", "value"}); the value may itself hold JSON.
    response_json    VARCHAR,
    expected_json    VARCHAR,
    extra_json       VARCHAR,
    -- The trial or measured failure the recordID names (NULL when none, or more than one, does).
    linked_run_id    VARCHAR,
    linked_owner     VARCHAR CHECK (linked_owner IN ('trial', 'failure')),
    linked_ordinal   INTEGER,
    PRIMARY KEY (evaluation_key, row_index)
);

CREATE TABLE evaluation_metric_values (
    evaluation_key   VARCHAR NOT NULL,
    row_index        INTEGER NOT NULL,
    ordinal          INTEGER NOT NULL,
    metric           VARCHAR NOT NULL,
    evaluator_kind   VARCHAR,
    kind             VARCHAR NOT NULL,
    -- The value as written: a boolean or a number (never both).
    value_bool       BOOLEAN,
    value_number     DOUBLE,
    -- What enters an aggregate: pass 1, fail 0, a score its number; NULL for ignore and
    -- unknown kinds, so AVG() leaves them out instead of counting them as zero.
    aggregate_value  DOUBLE,
    rationale        VARCHAR,
    extra_json       VARCHAR,
    PRIMARY KEY (evaluation_key, row_index, metric)
);

CREATE TABLE evaluation_summary_metrics (
    evaluation_key   VARCHAR NOT NULL,
    ordinal          INTEGER NOT NULL,
    -- Identity: (name, group_name, operation_type, source_metric, occurrence).
    name             VARCHAR NOT NULL,
    group_name       VARCHAR,
    operation_type   VARCHAR,
    source_metric    VARCHAR,
    occurrence       INTEGER NOT NULL,
    value            DOUBLE,
    extra_json       VARCHAR,
    PRIMARY KEY (evaluation_key, ordinal)
);
