-- What a change to topic $topic reaches: each publisher and each subscriber entry (one row per pair).
-- params: topic
SELECT src_service AS publisher, dst_service AS subscriber, resolution_status, match_basis,
       dst_ref.record_id AS subscriber_entry
FROM cross_service_edges WHERE edge_kind = 'MQ' AND urn = $topic
ORDER BY ALL
