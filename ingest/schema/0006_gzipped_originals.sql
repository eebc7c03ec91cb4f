-- fmbench schema, migration 6: original run files stored gzipped.
-- A new ingest keeps each run file gzipped (the bytes the site's default originals policy carries), instead
-- of its raw bytes, which DuckDB compressed again at every checkpoint and the build gzipped again for every
-- site. The rows stored before keep their raw bytes and say so: both read back as the same file
-- (fmbench.originals).

ALTER TABLE sources ADD COLUMN encoding VARCHAR NOT NULL DEFAULT 'identity';
