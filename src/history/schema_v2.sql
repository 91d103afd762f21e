-- Results store, schema version 2: each node's data-dir growth per successful
-- payment, and the point's (its nodes' summed). Runs recorded before have NULL.
ALTER TABLE points ADD COLUMN bytes_per_payment REAL;
ALTER TABLE nodes ADD COLUMN bytes_per_payment REAL;
