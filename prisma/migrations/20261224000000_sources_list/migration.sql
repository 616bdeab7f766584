-- The Sources list at 100k sources: a page is read in the database, not by loading every source.
-- By name (the default order), a page walks this index from the cursor and stops after the page,
-- so the first and the thousandth page cost the same (a few ms); id breaks ties between equal
-- names, as the keyset does.
CREATE INDEX "sources_name_id_idx" ON "sources"("name", "id");

-- The Overview's breakers tile and the list's breaker filter: only the sources whose breaker is
-- open or probing are in it (a handful in a healthy fleet), so counting and naming them does not
-- read the 100k closed ones. Partial, so it lives here and not in schema.prisma (as jobs' do).
CREATE INDEX "source_state_breaker_idx" ON "source_state"("breaker_state", "source_id")
    WHERE "breaker_state" <> 'closed';
