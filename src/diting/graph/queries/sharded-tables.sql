-- Sharded tables, their physical names and the status of their shard key, per service.
SELECT service_id, logical_table, datasource, list(DISTINCT physical_table ORDER BY physical_table) AS physical,
       any_value(confirmed_shard_key) AS shard_key, any_value(shard_key_status) AS shard_key_status
FROM table_access WHERE is_sharded GROUP BY service_id, logical_table, datasource ORDER BY ALL
