-- Results store on PostgreSQL, schema version 3 (as schema_v3.sql).
ALTER TABLE points ADD COLUMN made_before BIGINT;
