-- Cross-service edges with more than one candidate target, with the candidates.
SELECT src_service, edge_kind, urn, match_basis, list(DISTINCT dst_service ORDER BY dst_service) AS candidates
FROM cross_service_edges WHERE resolution_status = 'AMBIGUOUS'
GROUP BY src_service, edge_kind, urn, match_basis, src_ref ORDER BY ALL
