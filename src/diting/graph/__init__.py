"""The cross-service relation graph in DuckDB (SPEC §9): loading packages, alignment, views, queries."""
