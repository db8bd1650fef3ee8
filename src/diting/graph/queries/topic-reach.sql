-- What a change to topic $topic reaches: each publishing method and each subscriber entry it reaches
-- (one row per pair).
-- params: topic
-- names topic (topic): SELECT urn FROM alignment WHERE edge_kind = 'MQ' UNION SELECT e.urn FROM entities e JOIN packages p ON p.scan_id = e.scan_id AND p.is_current WHERE e.kind IN ('TOPIC', 'EVENT')
SELECT a.src_service AS publisher, coalesce(pm.stable_id, a.src_node_ref.record_id) AS publishing_method,
       a.dst_service AS subscriber, a.resolution_status, a.match_basis,
       coalesce(se.stable_id, a.dst_ref.record_id) AS subscriber_entry
FROM alignment a
LEFT JOIN entities pm ON pm.scan_id = a.src_node_ref.scan_id AND pm.record_id = a.src_node_ref.record_id
LEFT JOIN entities se ON se.scan_id = a.dst_ref.scan_id AND se.record_id = a.dst_ref.record_id
WHERE a.edge_kind = 'MQ' AND a.urn = $topic
ORDER BY ALL
