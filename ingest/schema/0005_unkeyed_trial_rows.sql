-- fmbench schema, migration 5: the per-trial tables without primary-key indexes.
-- trials, check_results, failures, tool_calls and final_state hold a run's rows by the thousand. Their
-- keys (run_id with ordinals, or with owner, ordinal and key) are unique by construction: a run's
-- rows are written together in one transaction from positions in its file (after its old rows are
-- deleted, when a sidecar changes), and nothing looks a row up by them through an index. Keeping
-- an index of each cost the writer about a tenth of its time and the database a quarter of its size.
-- DuckDB cannot drop a primary key, so each table is made again, its rows copied in order.

CREATE TABLE trials_unkeyed (
    run_id                      VARCHAR NOT NULL,
    ordinal                     INTEGER NOT NULL,
    trial_id                    VARCHAR NOT NULL,
    scenario_id                 VARCHAR NOT NULL,
    scenario_title              VARCHAR NOT NULL,
    category                    VARCHAR NOT NULL,
    sample_id                   VARCHAR NOT NULL,
    prompt                      VARCHAR NOT NULL,
    instructions                VARCHAR,
    check_definitions_json      VARCHAR NOT NULL,
    safety_expectation          VARCHAR,
    visual_fixture              VARCHAR,
    requested_model             VARCHAR NOT NULL,
    executed_model              VARCHAR NOT NULL,
    iteration                   BIGINT NOT NULL,
    used_fallback               BOOLEAN NOT NULL,
    fallback_reason             VARCHAR,
    offline_success             BOOLEAN,
    safety_outcome              VARCHAR,
    safety_detail               VARCHAR,
    response                    VARCHAR NOT NULL,
    started_at                  TIMESTAMP,
    ended_at                    TIMESTAMP,
    duration                    DOUBLE NOT NULL,
    time_to_first_token         DOUBLE,
    decode_duration             DOUBLE,
    input_token_count           BIGINT,
    output_token_count          BIGINT,
    first_update_token_count    BIGINT,
    token_count_source          VARCHAR,
    output_tokens_per_second    DOUBLE,
    output_chars_per_second     DOUBLE,
    stream_update_count         BIGINT,
    maximum_stream_update_gap   DOUBLE,
    reasoning_token_count       BIGINT,
    context_size                BIGINT,
    context_utilization         DOUBLE,
    starting_memory_bytes       UBIGINT,
    peak_memory_bytes           UBIGINT,
    ending_memory_bytes         UBIGINT,
    starting_thermal_state      VARCHAR,
    ending_thermal_state        VARCHAR,
    worst_thermal_state         VARCHAR,
    environment_thermal_state   VARCHAR,
    check_count                 BIGINT NOT NULL,
    checks_passed               BIGINT NOT NULL,
    constraint_score            DOUBLE,
    prompt_pass                 BOOLEAN NOT NULL,
    safety_pass                 BOOLEAN,
    task_passed                 BOOLEAN NOT NULL,
    extra_json                  VARCHAR,
    environment_low_power_mode  BOOLEAN,
    environment_timestamp       TIMESTAMP
);
INSERT INTO trials_unkeyed SELECT * FROM trials;
DROP TABLE trials;
ALTER TABLE trials_unkeyed RENAME TO trials;

CREATE TABLE check_results_unkeyed (
    run_id           VARCHAR NOT NULL,
    trial_ordinal    INTEGER NOT NULL,
    ordinal          INTEGER NOT NULL,
    label            VARCHAR NOT NULL,
    passed           BOOLEAN NOT NULL,
    detail           VARCHAR,
    check_case       VARCHAR,
    definition_json  VARCHAR
);
INSERT INTO check_results_unkeyed SELECT * FROM check_results;
DROP TABLE check_results;
ALTER TABLE check_results_unkeyed RENAME TO check_results;

CREATE TABLE failures_unkeyed (
    run_id       VARCHAR NOT NULL,
    ordinal      INTEGER NOT NULL,
    failure_id   VARCHAR NOT NULL,
    scenario_id  VARCHAR NOT NULL,
    sample_id    VARCHAR,
    iteration    BIGINT NOT NULL,
    kind         VARCHAR,
    message      VARCHAR NOT NULL,
    is_warmup    BOOLEAN NOT NULL
);
INSERT INTO failures_unkeyed SELECT * FROM failures;
DROP TABLE failures;
ALTER TABLE failures_unkeyed RENAME TO failures;

CREATE TABLE tool_calls_unkeyed (
    run_id          VARCHAR NOT NULL,
    owner           VARCHAR NOT NULL,
    owner_ordinal   INTEGER NOT NULL,
    ordinal         INTEGER NOT NULL,
    name            VARCHAR NOT NULL,
    arguments_json  VARCHAR NOT NULL
);
INSERT INTO tool_calls_unkeyed SELECT * FROM tool_calls;
DROP TABLE tool_calls;
ALTER TABLE tool_calls_unkeyed RENAME TO tool_calls;

CREATE TABLE final_state_unkeyed (
    run_id         VARCHAR NOT NULL,
    owner          VARCHAR NOT NULL,
    owner_ordinal  INTEGER NOT NULL,
    key            VARCHAR NOT NULL,
    value_kind     VARCHAR NOT NULL,
    value_json     VARCHAR NOT NULL
);
INSERT INTO final_state_unkeyed SELECT * FROM final_state;
DROP TABLE final_state;
ALTER TABLE final_state_unkeyed RENAME TO final_state;
