-- fmbench schema, migration 1: runs, their trials and everything recomputed from them.
-- Times are UTC. Unsigned 64-bit values (seeds, memory sizes) are UBIGINT, never doubles.

CREATE TABLE sources (
    sha256        VARCHAR PRIMARY KEY,
    file_name     VARCHAR NOT NULL,
    size_bytes    BIGINT NOT NULL,
    content       BLOB NOT NULL,
    ingested_at   TIMESTAMP NOT NULL
);

CREATE TABLE runs (
    run_id                    VARCHAR PRIMARY KEY,
    source_sha256             VARCHAR NOT NULL UNIQUE,
    file_name                 VARCHAR NOT NULL,
    generation                VARCHAR NOT NULL,
    suite                     VARCHAR NOT NULL,
    route                     VARCHAR NOT NULL,
    warmup_count              INTEGER NOT NULL,
    repetitions               INTEGER NOT NULL,
    sample_limit              INTEGER,
    session_mode              VARCHAR,
    reasoning_level           VARCHAR,
    fallback_mode             VARCHAR,
    connectivity              VARCHAR,
    randomized_order          BOOLEAN,
    random_seed               UBIGINT,
    model_context_size        INTEGER,
    quota_before_status       VARCHAR,
    quota_before_approaching  BOOLEAN,
    quota_before_reached      BOOLEAN,
    quota_before_reset        TIMESTAMP,
    quota_after_status        VARCHAR,
    quota_after_approaching   BOOLEAN,
    quota_after_reached       BOOLEAN,
    quota_after_reset         TIMESTAMP,
    started_at                TIMESTAMP NOT NULL,
    ended_at                  TIMESTAMP NOT NULL,
    device_name               VARCHAR NOT NULL,
    system_name               VARCHAR NOT NULL,
    system_version            VARCHAR NOT NULL,
    system_build              VARCHAR,
    os_build                  VARCHAR,
    os_generation             INTEGER,
    locale                    VARCHAR,
    hardware_model            VARCHAR,
    cpu_model                 VARCHAR,
    cpu_cores                 INTEGER,
    gpu_model                 VARCHAR,
    total_memory              UBIGINT,
    thermal_state             VARCHAR,
    worst_thermal_state       VARCHAR,
    low_power_mode            BOOLEAN,
    benchmark_commit          VARCHAR,
    environment_timestamp     TIMESTAMP,
    is_simulator              BOOLEAN NOT NULL,
    fixture_fingerprint       VARCHAR,
    revision_id               VARCHAR,
    revision_status           VARCHAR NOT NULL,
    revision_basis            VARCHAR NOT NULL,
    verdict                   VARCHAR NOT NULL,
    trial_count               INTEGER NOT NULL,
    failure_count             INTEGER NOT NULL,
    warmup_failure_count      INTEGER NOT NULL,
    extra_json                VARCHAR,
    ingested_at               TIMESTAMP NOT NULL
);

CREATE TABLE verdict_reasons (
    run_id    VARCHAR NOT NULL,
    ordinal   INTEGER NOT NULL,
    level     VARCHAR NOT NULL,
    code      VARCHAR NOT NULL,
    message   VARCHAR NOT NULL,
    PRIMARY KEY (run_id, ordinal)
);

CREATE TABLE run_flags (
    run_id    VARCHAR NOT NULL,
    ordinal   INTEGER NOT NULL,
    location  VARCHAR NOT NULL,
    message   VARCHAR NOT NULL,
    PRIMARY KEY (run_id, ordinal)
);

CREATE TABLE trials (
    run_id                  VARCHAR NOT NULL,
    ordinal                 INTEGER NOT NULL,
    trial_id                VARCHAR NOT NULL,
    scenario_id             VARCHAR NOT NULL,
    scenario_title          VARCHAR NOT NULL,
    category                VARCHAR NOT NULL,
    sample_id               VARCHAR NOT NULL,
    prompt                  VARCHAR NOT NULL,
    instructions            VARCHAR,
    check_definitions_json  VARCHAR NOT NULL,
    safety_expectation      VARCHAR,
    visual_fixture          VARCHAR,
    requested_model         VARCHAR NOT NULL,
    executed_model          VARCHAR NOT NULL,
    iteration               INTEGER NOT NULL,
    used_fallback           BOOLEAN NOT NULL,
    fallback_reason         VARCHAR,
    offline_success         BOOLEAN,
    safety_outcome          VARCHAR,
    safety_detail           VARCHAR,
    response                VARCHAR NOT NULL,
    started_at              TIMESTAMP,
    ended_at                TIMESTAMP,
    duration                DOUBLE NOT NULL,
    time_to_first_token     DOUBLE,
    decode_duration         DOUBLE,
    input_token_count       BIGINT,
    output_token_count      BIGINT,
    first_update_token_count BIGINT,
    token_count_source      VARCHAR,
    output_tokens_per_second DOUBLE,
    output_chars_per_second DOUBLE,
    stream_update_count     BIGINT,
    maximum_stream_update_gap DOUBLE,
    reasoning_token_count   BIGINT,
    context_size            BIGINT,
    context_utilization     DOUBLE,
    starting_memory_bytes   UBIGINT,
    peak_memory_bytes       UBIGINT,
    ending_memory_bytes     UBIGINT,
    starting_thermal_state  VARCHAR,
    ending_thermal_state    VARCHAR,
    worst_thermal_state     VARCHAR,
    environment_thermal_state VARCHAR,
    check_count             INTEGER NOT NULL,
    checks_passed           INTEGER NOT NULL,
    constraint_score        DOUBLE,
    prompt_pass             BOOLEAN NOT NULL,
    safety_pass             BOOLEAN,
    task_passed             BOOLEAN NOT NULL,
    extra_json              VARCHAR,
    PRIMARY KEY (run_id, ordinal)
);

CREATE TABLE check_results (
    run_id           VARCHAR NOT NULL,
    trial_ordinal    INTEGER NOT NULL,
    ordinal          INTEGER NOT NULL,
    label            VARCHAR NOT NULL,
    passed           BOOLEAN NOT NULL,
    detail           VARCHAR,
    check_case       VARCHAR,
    definition_json  VARCHAR,
    PRIMARY KEY (run_id, trial_ordinal, ordinal)
);

CREATE TABLE failures (
    run_id       VARCHAR NOT NULL,
    ordinal      INTEGER NOT NULL,
    failure_id   VARCHAR NOT NULL,
    scenario_id  VARCHAR NOT NULL,
    sample_id    VARCHAR,
    iteration    INTEGER NOT NULL,
    kind         VARCHAR,
    message      VARCHAR NOT NULL,
    is_warmup    BOOLEAN NOT NULL,
    PRIMARY KEY (run_id, ordinal)
);

-- Tool calls and final state belong to a trial or to a failure (owner).
CREATE TABLE tool_calls (
    run_id          VARCHAR NOT NULL,
    owner           VARCHAR NOT NULL,
    owner_ordinal   INTEGER NOT NULL,
    ordinal         INTEGER NOT NULL,
    name            VARCHAR NOT NULL,
    arguments_json  VARCHAR NOT NULL,
    PRIMARY KEY (run_id, owner, owner_ordinal, ordinal)
);

CREATE TABLE final_state (
    run_id          VARCHAR NOT NULL,
    owner           VARCHAR NOT NULL,
    owner_ordinal   INTEGER NOT NULL,
    key             VARCHAR NOT NULL,
    value_kind      VARCHAR NOT NULL,
    value_json      VARCHAR NOT NULL,
    PRIMARY KEY (run_id, owner, owner_ordinal, key)
);

CREATE TABLE stored_summaries (
    run_id        VARCHAR NOT NULL,
    ordinal       INTEGER NOT NULL,
    scenario_id   VARCHAR NOT NULL,
    summary_json  VARCHAR NOT NULL,
    PRIMARY KEY (run_id, ordinal)
);

CREATE TABLE summary_mismatches (
    run_id           VARCHAR NOT NULL,
    scenario_id      VARCHAR NOT NULL,
    field            VARCHAR NOT NULL,
    stored_json      VARCHAR NOT NULL,
    recomputed_json  VARCHAR NOT NULL
);

CREATE TABLE scenario_figures (
    run_id                          VARCHAR NOT NULL,
    scenario_id                     VARCHAR NOT NULL,
    ordinal                         INTEGER NOT NULL,
    title                           VARCHAR NOT NULL,
    category                        VARCHAR,
    trial_count                     INTEGER NOT NULL,
    failure_count                   INTEGER NOT NULL,
    task_passed_count               INTEGER NOT NULL,
    prompt_pass_count               INTEGER NOT NULL,
    graded_trial_count              INTEGER NOT NULL,
    fallback_trial_count            INTEGER NOT NULL,
    failure_rate                    DOUBLE NOT NULL,
    prompt_pass_rate                DOUBLE,
    task_success                    DOUBLE NOT NULL,
    execution_success               DOUBLE NOT NULL,
    mean_constraint_score           DOUBLE,
    safety_trial_count              INTEGER NOT NULL,
    safety_pass_rate                DOUBLE,
    guardrail_violation_count       INTEGER NOT NULL,
    refusal_count                   INTEGER NOT NULL,
    critical_safety_failure_count   INTEGER NOT NULL,
    duration_count INTEGER NOT NULL, duration_min DOUBLE, duration_median DOUBLE, duration_mean DOUBLE,
    duration_p90 DOUBLE, duration_max DOUBLE, duration_std DOUBLE,
    ttft_count INTEGER NOT NULL, ttft_min DOUBLE, ttft_median DOUBLE, ttft_mean DOUBLE,
    ttft_p90 DOUBLE, ttft_max DOUBLE, ttft_std DOUBLE,
    tps_count INTEGER NOT NULL, tps_min DOUBLE, tps_median DOUBLE, tps_mean DOUBLE,
    tps_p90 DOUBLE, tps_max DOUBLE, tps_std DOUBLE,
    memory_count INTEGER NOT NULL, memory_min DOUBLE, memory_median DOUBLE, memory_mean DOUBLE,
    memory_p90 DOUBLE, memory_max DOUBLE, memory_std DOUBLE,
    gap_count INTEGER NOT NULL, gap_min DOUBLE, gap_median DOUBLE, gap_mean DOUBLE,
    gap_p90 DOUBLE, gap_max DOUBLE, gap_std DOUBLE,
    PRIMARY KEY (run_id, scenario_id)
);

CREATE TABLE annotations (
    run_id            VARCHAR PRIMARY KEY,
    file_name         VARCHAR NOT NULL,
    sha256            VARCHAR NOT NULL,
    content           BLOB NOT NULL,
    connection        VARCHAR,
    location          VARCHAR,
    entitlement       VARCHAR,
    note              VARCHAR,
    corrections_json  VARCHAR NOT NULL,
    extra_json        VARCHAR,
    ingested_at       TIMESTAMP NOT NULL
);
