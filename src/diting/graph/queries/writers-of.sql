-- Which services write (and read) table $table (a logical table urn such as table://t_order; t_order
-- and table://t_order@datasource name it too), per datasource.
-- params: table
-- names table (table): SELECT logical_table FROM table_access
SELECT logical_table, datasource, service_id, list(DISTINCT op ORDER BY op) AS ops,
       count(DISTINCT via_ref) AS statements
FROM table_access WHERE logical_table = $table
GROUP BY ALL ORDER BY ALL
