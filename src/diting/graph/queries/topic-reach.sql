-- What a change to topic $topic reaches: each publishing method and each subscriber entry it reaches
-- (one row per pair).
-- params: topic
SELECT a.src_service AS publisher, a.src_node_ref.record_id AS publishing_method, a.dst_service AS subscriber,
       a.resolution_status, a.match_basis, a.dst_ref.record_id AS subscriber_entry
FROM alignment a WHERE a.edge_kind = 'MQ' AND a.urn = $topic
ORDER BY ALL
