-- Unresolved cross-service calls per service: consumer bindings with no provider, sends and subscriptions
-- no one matches, remote calls the scan could not fold.
SELECT coalesce(src_service, dst_service) AS service_id, edge_kind, match_basis, count(*) AS unresolved
FROM cross_service_edges WHERE resolution_status = 'UNRESOLVED'
GROUP BY ALL ORDER BY service_id, unresolved DESC, edge_kind, match_basis
