-- fmbench schema, migration 3: every count a run file holds (Swift Int, signed 64-bit) stored exactly.
-- Counts, iterations and the counts derived from them were 32-bit INTEGER; they become BIGINT.
-- Row ordinals (positions in a file's arrays) stay INTEGER.

ALTER TABLE runs ALTER COLUMN warmup_count TYPE BIGINT;
ALTER TABLE runs ALTER COLUMN repetitions TYPE BIGINT;
ALTER TABLE runs ALTER COLUMN sample_limit TYPE BIGINT;
ALTER TABLE runs ALTER COLUMN model_context_size TYPE BIGINT;
ALTER TABLE runs ALTER COLUMN cpu_cores TYPE BIGINT;
ALTER TABLE runs ALTER COLUMN trial_count TYPE BIGINT;
ALTER TABLE runs ALTER COLUMN failure_count TYPE BIGINT;
ALTER TABLE runs ALTER COLUMN warmup_failure_count TYPE BIGINT;

ALTER TABLE trials ALTER COLUMN iteration TYPE BIGINT;
ALTER TABLE trials ALTER COLUMN check_count TYPE BIGINT;
ALTER TABLE trials ALTER COLUMN checks_passed TYPE BIGINT;

ALTER TABLE failures ALTER COLUMN iteration TYPE BIGINT;

ALTER TABLE scenario_figures ALTER COLUMN trial_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN failure_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN task_passed_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN prompt_pass_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN graded_trial_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN fallback_trial_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN safety_trial_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN guardrail_violation_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN refusal_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN critical_safety_failure_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN duration_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN ttft_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN tps_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN memory_count TYPE BIGINT;
ALTER TABLE scenario_figures ALTER COLUMN gap_count TYPE BIGINT;

-- Each trial's own environment snapshot, beside the thermal state already kept: Low Power Mode and
-- when the snapshot was taken (a run can change either between trials).
ALTER TABLE trials ADD COLUMN environment_low_power_mode BOOLEAN;
ALTER TABLE trials ADD COLUMN environment_timestamp TIMESTAMP;
