-- Results store, schema version 3: the payments the network had made before a
-- point's measured load (`history:`, a restored snapshot's). Runs recorded before,
-- and loads on a fresh network, have NULL.
ALTER TABLE points ADD COLUMN made_before INTEGER;
