"""Storage: the DuckDB file, its Parquet form, the originals it keeps and the read-side queries many commands share.

Writing runs into it, re-deriving and verifying them is :mod:`fmbench.ingest`.
"""
