-- One news_merge per conflict instead of two. The writer's ON CONFLICT … WHERE asked
-- `news_merge(n, excluded) IS DISTINCT FROM n` and its SET ran news_merge again: twice per
-- conflict, each sorting the instruments of both rows with a query. The WHERE now asks
-- news_merge_changes, which gives the same answer from field comparisons, only SET merges, and
-- the merge sorts instruments only when the incoming ones add something.

-- Whether news_instruments(cur || inc) is cur itself: cur is already a set in that form (every
-- stored row is) and every non-empty element of inc is in it. Never NULL.
CREATE FUNCTION news_instruments_cover(cur text[], inc text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT news_instruments(cur) IS NOT DISTINCT FROM cur AND news_instruments(inc) <@ cur
$$;

-- Whether news_merge(cur, inc) returns anything but cur, without merging. news_merge changes a
-- field only when one of the tests below holds (each is the condition under which one of its
-- assignments changes its field), and version and last_result only follow those. When none
-- holds, the merged row has cur's content, so its hash differs from the stored one only if the
-- stored one is not the hash of cur's content: the last test. A NULL test counts as "no change",
-- as in news_merge's IFs, and the answer is never NULL. Inlined into the writer's statement (one expression, no call);
-- workers/store/newsMergeChanges.test.ts holds it against news_merge on random rows.
CREATE FUNCTION news_merge_changes(cur news, inc news) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
           (inc.title IS NOT NULL AND (cur.title IS NULL OR inc.title_stamp > cur.title_stamp))
        OR (inc.link IS NOT NULL AND (cur.link IS NULL OR inc.link_stamp > cur.link_stamp))
        OR (inc.summary IS NOT NULL AND (cur.summary IS NULL OR inc.summary_stamp > cur.summary_stamp))
        OR (inc.category IS NOT NULL AND (cur.category IS NULL OR inc.category_stamp > cur.category_stamp))
        OR (cur.language IS NULL AND inc.language IS NOT NULL)
        OR (cur.published_at IS NULL AND inc.published_at IS NOT NULL)
        OR (NOT cur.breaking AND coalesce(inc.breaking, false))
        OR (inc.quality = 'authoritative' AND cur.quality <> 'authoritative')
        OR (inc.revision IS NOT NULL AND (cur.revision IS NULL OR inc.revision > cur.revision))
        OR NOT news_instruments_cover(cur.instruments, inc.instruments)
        OR news_content_hash(cur) IS DISTINCT FROM cur.content_hash, false)
$$;

-- The monotonic merge of the storage contract, as in the first migration (read the rules
-- there), except that instruments are sorted again only when inc adds one: when cur covers
-- inc, news_instruments(cur || inc) is cur, which m already holds.
CREATE OR REPLACE FUNCTION news_merge(cur news, inc news) RETURNS news
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    m news := cur;
    edited boolean := false;
BEGIN
    IF inc.title IS NOT NULL AND (cur.title IS NULL OR inc.title_stamp > cur.title_stamp) THEN
        edited := edited OR (cur.quality = 'authoritative' AND cur.title <> inc.title);
        m.title := inc.title;
        m.title_stamp := inc.title_stamp;
    END IF;
    IF inc.link IS NOT NULL AND (cur.link IS NULL OR inc.link_stamp > cur.link_stamp) THEN
        edited := edited OR (cur.quality = 'authoritative' AND cur.link <> inc.link);
        m.link := inc.link;
        m.link_stamp := inc.link_stamp;
    END IF;
    IF inc.summary IS NOT NULL AND (cur.summary IS NULL OR inc.summary_stamp > cur.summary_stamp) THEN
        edited := edited OR (cur.quality = 'authoritative' AND cur.summary <> inc.summary);
        m.summary := inc.summary;
        m.summary_stamp := inc.summary_stamp;
    END IF;
    IF inc.category IS NOT NULL AND (cur.category IS NULL OR inc.category_stamp > cur.category_stamp) THEN
        edited := edited OR (cur.quality = 'authoritative' AND cur.category <> inc.category);
        m.category := inc.category;
        m.category_stamp := inc.category_stamp;
    END IF;
    m.language := coalesce(cur.language, inc.language);
    m.published_at := coalesce(cur.published_at, inc.published_at);
    m.breaking := cur.breaking OR coalesce(inc.breaking, false);
    IF NOT news_instruments_cover(cur.instruments, inc.instruments) THEN
        m.instruments := news_instruments(cur.instruments || inc.instruments);
    END IF;
    IF inc.quality = 'authoritative' THEN
        m.quality := 'authoritative';
    END IF;
    m.revision := greatest(cur.revision, inc.revision);
    m.content_hash := news_content_hash(m);

    IF m.content_hash IS DISTINCT FROM cur.content_hash OR m.quality <> cur.quality THEN
        m.version := cur.version + 1;
        m.last_result := CASE WHEN edited THEN 'updated' ELSE 'upgraded' END;
    ELSIF (m.title_stamp, m.link_stamp, m.summary_stamp, m.category_stamp, m.revision)
          IS DISTINCT FROM (cur.title_stamp, cur.link_stamp, cur.summary_stamp, cur.category_stamp, cur.revision) THEN
        m.last_result := 'unchanged';
    END IF;
    RETURN m;
END
$$;
