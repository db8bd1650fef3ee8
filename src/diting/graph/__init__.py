"""The cross-service relation graph in DuckDB (docs/graph.md): loading packages, alignment, views, queries."""
