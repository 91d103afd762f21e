-- Results store on PostgreSQL, schema version 2 (as schema_v2.sql).
ALTER TABLE points ADD COLUMN bytes_per_payment DOUBLE PRECISION;
ALTER TABLE nodes ADD COLUMN bytes_per_payment DOUBLE PRECISION;
