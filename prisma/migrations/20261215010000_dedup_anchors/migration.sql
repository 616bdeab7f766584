-- Stage 3's second lookup (lib/dedup/anchors.ts, docs/decisions/022): per item, up to
-- retrieval.anchors (6) 32-bit hashes of the stems of its most distinctive words. A rewrite
-- keeps its names, numbers and long words while its SimHash moves 14-16 bits, out of reach of
-- the bands; two items sharing retrieval.minShared (2) anchors are looked up by them.
--
-- One row per (item, anchor), for the item's latest keyed version: the stage replaces an item's
-- rows when it keys a new version and removes them when the item is tombstoned or left without
-- text. first_seen_at is the item's (it never changes), copied so the window is in the index.
CREATE TABLE "dedup_anchors" (
    "entry_key" TEXT NOT NULL,
    "anchor" INTEGER NOT NULL,
    "first_seen_at" TIMESTAMPTZ(6) NOT NULL,
    CONSTRAINT "dedup_anchors_pkey" PRIMARY KEY ("entry_key", "anchor")
);
-- The lookup: per anchor, the most recent retrieval.postingCap rows in the window, newest first
-- (one forward range scan per anchor, LIMIT cap). The primary key (entry_key first) serves
-- replacing and removing an item's rows.
CREATE INDEX "dedup_anchors_lookup_idx" ON "dedup_anchors"("anchor", "first_seen_at" DESC);
