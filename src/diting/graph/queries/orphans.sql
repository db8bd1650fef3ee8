-- RPC contracts nobody in the estate consumes and topics nobody subscribes to (ORPHAN_ENTRY), and
-- consumers with no provider (UNRESOLVED_CALL).
SELECT code, service_id, urn, message FROM graph_findings
WHERE code IN ('ORPHAN_ENTRY', 'UNRESOLVED_CALL') ORDER BY ALL
