-- The service dependency graph: one row per (source, target, edge kind) with counts by resolution status.
SELECT * FROM service_dependencies ORDER BY src_service NULLS LAST, dst_service NULLS LAST, edge_kind
