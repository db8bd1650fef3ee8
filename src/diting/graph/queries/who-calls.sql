-- Who calls contract $urn (an RPC or HTTP urn): each consumer with the method that calls it and the status.
-- params: urn
-- names urn (contract): SELECT urn FROM contracts UNION SELECT urn FROM cross_service_edges WHERE edge_kind IN ('RPC', 'HTTP')
SELECT x.src_service AS consumer, x.dst_service AS provider, x.resolution_status, x.match_basis,
       coalesce(m.stable_id, c.source_ref.record_id) AS calling_method
FROM cross_service_edges x
JOIN alignment a ON a.src_ref = x.src_ref AND a.dst_ref IS NOT DISTINCT FROM x.dst_ref
LEFT JOIN relations c ON c.scan_id = a.src_node_ref.scan_id AND c.kind = 'CALLS'
     AND c.target_ref.record_id = a.src_node_ref.record_id
LEFT JOIN entities m ON m.scan_id = c.source_ref.scan_id AND m.record_id = c.source_ref.record_id
WHERE x.urn = $urn AND x.edge_kind IN ('RPC', 'HTTP')
ORDER BY ALL
