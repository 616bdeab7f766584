-- Stage 3's band lookup needs, of each item with a band among the probe's values in the window,
-- only its SimHash (for the Hamming distance) and its entry key. With both in the band indexes
-- each band is an index-only scan (lookup.ts nearQuery reads the four as a UNION), where a
-- BitmapOr of the four had to visit a heap page for every row (~1,000 at 1,000,000 items):
-- EXPLAIN ANALYZE on a 1,000,000-item window, 1.0–3.1 ms from 4.9–10.8 ms, the same candidates.
DROP INDEX "dedup_items_band0_idx";
DROP INDEX "dedup_items_band1_idx";
DROP INDEX "dedup_items_band2_idx";
DROP INDEX "dedup_items_band3_idx";
CREATE INDEX "dedup_items_band0_idx" ON "dedup_items"("band0", "first_seen_at", "simhash", "entry_key") WHERE "live";
CREATE INDEX "dedup_items_band1_idx" ON "dedup_items"("band1", "first_seen_at", "simhash", "entry_key") WHERE "live";
CREATE INDEX "dedup_items_band2_idx" ON "dedup_items"("band2", "first_seen_at", "simhash", "entry_key") WHERE "live";
CREATE INDEX "dedup_items_band3_idx" ON "dedup_items"("band3", "first_seen_at", "simhash", "entry_key") WHERE "live";
