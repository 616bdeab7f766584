-- Stage 3's anchor lookup reads, per anchor, the newest rows in the window and needs only their
-- entry keys: with the key in the index that is an index-only scan (a few index pages per anchor)
-- instead of a heap page per row (~240 per anchor in a crowded window).
DROP INDEX "dedup_anchors_lookup_idx";
CREATE INDEX "dedup_anchors_lookup_idx" ON "dedup_anchors"("anchor", "first_seen_at" DESC, "entry_key");
