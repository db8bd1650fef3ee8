-- Which services write (and read) table $table (a logical table urn such as table://t_order), per datasource.
-- params: table
SELECT logical_table, datasource, service_id, list(DISTINCT op ORDER BY op) AS ops,
       count(DISTINCT via_ref) AS statements
FROM table_access WHERE logical_table = $table
GROUP BY ALL ORDER BY ALL
