-- Table ownership problems: tables written by more than one service, and services touching a table
-- another service alone writes.
SELECT code, urn AS logical_table, service_id, related_services, resolution_status, message
FROM graph_findings WHERE code IN ('SINGLE_WRITER_VIOLATION', 'CROSS_SERVICE_DATA_ACCESS')
ORDER BY code DESC, urn, service_id
