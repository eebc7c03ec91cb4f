-- fmbench schema, migration 4: what derived each run's figures, verdict and scoring rule set.
-- A run's verdict, figures and rule set are derived from its original bytes. analysis_version
-- records which version of fmbench's rules derived them (NULL: before versions were recorded,
-- version 1). When fmbench's rules change, opening the database re-derives every run of an
-- older version from sources.content (a data migration, recorded in fmbench_data_migrations).

ALTER TABLE runs ADD COLUMN analysis_version INTEGER;
-- The scoring rule set that reproduces the stored summaries (NULL: none does, or none stored),
-- and the sentence that says so ("stored under rules B, before 60b596e").
ALTER TABLE runs ADD COLUMN scoring_rules VARCHAR;
ALTER TABLE runs ADD COLUMN scoring_statement VARCHAR;
-- What decided whether the run was measured in a Simulator (hardware table or sidecar).
ALTER TABLE runs ADD COLUMN simulator_evidence VARCHAR;

CREATE TABLE fmbench_data_migrations (
    analysis_version  INTEGER PRIMARY KEY,
    runs_rederived    INTEGER NOT NULL,
    applied_at        TIMESTAMP NOT NULL
);
