import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./testing/db";

// The migrations are hand-written SQL (Prisma's schema engine is not available offline), so this
// test is what keeps them and prisma/schema.prisma in step: every model and every field is
// written and read back through the generated client on the migrated database, and every
// column of every table is a field of its model.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

async function columnsOf(table: string): Promise<string[]> {
  const rows = await db.prisma.$queryRaw<{ column_name: string }[]>`
    SELECT column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY column_name`;
  return rows.map((r) => r.column_name);
}

function expectSameColumns(record: object, columns: string[]) {
  expect(Object.keys(record).map(snake).sort()).toEqual([...columns].sort());
}

describe("the migrated database matches prisma/schema.prisma", () => {
  it("sources", async () => {
    const data = {
      id: "s-1",
      name: "Source one",
      kind: "feed",
      url: "https://feeds.example/rss",
      allowPrivate: true,
      enabled: false,
      observes: null,
      backfillUrl: "https://feeds.example/history",
      pollIntervalSeconds: 60,
      collectors: ["A", "B"],
      configOrigin: "file",
      folder: "News/Tech",
      tickers: [],
      storyMode: null,
      webhookSecrets: [],
      render: "browser",
      createdAt: new Date("2026-01-01T00:00:00Z"),
      updatedAt: new Date("2026-01-02T00:00:00Z"),
    };
    const created = await db.prisma.source.create({ data });
    expect(created).toEqual(data);
    expectSameColumns(created, await columnsOf("sources"));
    const updated = await db.prisma.source.update({
      where: { id: "s-1" },
      data: { name: "Renamed", kind: "story-api", url: null, allowPrivate: false, enabled: true },
    });
    expect(updated).toMatchObject({ name: "Renamed", kind: "story-api", url: null });
    await expect(
      db.prisma.source.create({ data: { id: "bad", name: "x", kind: "carrier-pigeon" } }),
    ).rejects.toThrow();
    // A folder is 1 to 200 characters, or none (sources_folder_check).
    for (const folder of ["", "x".repeat(201)]) {
      await expect(
        db.prisma.source.create({ data: { id: "bad", name: "x", kind: "feed", folder } }),
      ).rejects.toThrow();
    }
  });

  it("news", async () => {
    const data = {
      entryKey: "k".repeat(64),
      sourceId: "s-1",
      canonicalId: "guid-1",
      quality: "authoritative",
      title: "Title",
      titleStamp: 3n,
      link: "https://news.example/1",
      linkStamp: 3n,
      summary: "Summary",
      summaryStamp: 3n,
      category: "markets",
      categoryStamp: 3n,
      language: "bn",
      publishedAt: new Date("2026-06-12T09:00:00Z"),
      breaking: true,
      instruments: ["EURUSD", "SPX"],
      revision: 1_780_000_000_000n,
      version: 7,
      contentHash: "abc",
      firstSeenAt: new Date("2026-06-12T09:00:01Z"),
      firstSource: "s-1",
      firstCollector: "A",
      lastResult: "updated",
      deletedAt: new Date("2026-06-12T10:00:00Z"),
      duplicateOf: "other",
      dedupStage: "url",
      dedupScore: 0.97,
      dedupThreshold: 0.9,
      dedupAt: new Date("2026-06-12T09:30:00Z"),
      updatedAt: new Date("2026-06-12T10:00:00Z"),
    };
    const created = await db.prisma.news.create({ data });
    expect(created).toEqual(data);
    expectSameColumns(created, await columnsOf("news"));
    const cleared = await db.prisma.news.update({
      where: { entryKey: data.entryKey },
      data: {
        title: null,
        titleStamp: null,
        link: null,
        linkStamp: null,
        summary: null,
        summaryStamp: null,
        category: null,
        categoryStamp: null,
        language: null,
        publishedAt: null,
        instruments: [],
        revision: null,
        contentHash: null,
        deletedAt: null,
        duplicateOf: null,
        dedupStage: null,
        dedupScore: null,
        dedupThreshold: null,
        dedupAt: null,
        quality: "fallback",
      },
    });
    expect(cleared).toMatchObject({ title: null, instruments: [], quality: "fallback" });
    await expect(
      db.prisma.news.update({ where: { entryKey: data.entryKey }, data: { quality: "rumour" } }),
    ).rejects.toThrow();
  });

  it("news_events", async () => {
    const data = {
      entryKey: "k".repeat(64),
      sourceId: "s-1",
      collector: "B",
      origin: "backfill",
      kind: "edit",
      observedAt: new Date("2026-06-12T09:00:00Z"),
      receivedAt: new Date("2026-06-12T09:00:02Z"),
      revision: 4n,
      payload: { title: "Title", instruments: ["SPX"] },
      result: "updated",
      reason: null,
      version: 3,
      sightings: 12,
      lastSeenAt: new Date("2026-06-12T09:11:00Z"),
    };
    const created = await db.prisma.newsEvent.create({ data });
    expect(created).toMatchObject(data);
    expect(typeof created.id).toBe("bigint");
    expectSameColumns(created, await columnsOf("news_events"));
    await expect(
      db.prisma.newsEvent.create({ data: { ...data, result: "maybe" } }),
    ).rejects.toThrow();
    await expect(db.prisma.newsEvent.create({ data: { ...data, sightings: 0 } })).rejects.toThrow();
  });

  it("repair_runs and repair_changes", async () => {
    const run = await db.prisma.repairRun.create({
      data: {
        actor: "admin",
        dryRun: false,
        status: "finished",
        startedAt: new Date("2026-06-12T09:00:00Z"),
        finishedAt: new Date("2026-06-12T09:01:00Z"),
        rowsTotal: 10,
        rowsExamined: 10,
        rowsChanged: 2,
        error: "none",
      },
    });
    expectSameColumns(run, await columnsOf("repair_runs"));
    const change = await db.prisma.repairChange.create({
      data: {
        runId: run.id,
        entryKey: "k",
        diff: { title: { from: null, to: "x" } },
        applied: true,
      },
    });
    expectSameColumns(change, await columnsOf("repair_changes"));
    const withChanges = await db.prisma.repairRun.findUniqueOrThrow({
      where: { id: run.id },
      include: { changes: true },
    });
    expect(withChanges.changes).toEqual([change]);
    await db.prisma.repairRun.delete({ where: { id: run.id } });
    expect(await db.prisma.repairChange.count({ where: { runId: run.id } })).toBe(0);
  });

  it("source_state, fetch_attempts, collector_status", async () => {
    await db.prisma.source.create({ data: { id: "s-2", name: "Two", kind: "stream" } });
    const page = await db.prisma.source.create({
      data: { id: "s-2-page", name: "Two's page", kind: "page", observes: "s-2" },
      include: { observed: true },
    });
    expect(page.observed?.id).toBe("s-2");
    const at = new Date("2026-06-12T09:00:00Z");
    const state = {
      sourceId: "s-2",
      etag: '"abc"',
      lastModified: "Fri, 12 Jun 2026 09:00:00 GMT",
      bodySha256: "f".repeat(64),
      trustsValidators: false,
      lastFullFetchAt: at,
      nextPollAt: at,
      lastPolledAt: at,
      hotUntil: at,
      breakerState: "half_open",
      breakerFailures: 5,
      breakerChangedAt: at,
      breakerProbeOwner: "worker-1",
      breakerProbeUntil: at,
      lastErrorCode: "http_503",
      lastErrorMessage: "Service Unavailable",
      lastErrorAt: at,
      disabledReason: "http_410",
      disabledAt: at,
      entriesLeftOut: 48_000,
      entriesInDocument: 50_000,
      entriesLeftOutAt: at,
      pollEverySeconds: 15,
      updatedAt: at,
    };
    const created = await db.prisma.sourceState.create({ data: state });
    expect(created).toEqual(state);
    expectSameColumns(created, await columnsOf("source_state"));
    await expect(
      db.prisma.sourceState.update({ where: { sourceId: "s-2" }, data: { breakerState: "ajar" } }),
    ).rejects.toThrow();

    const attempt = await db.prisma.fetchAttempt.create({
      data: {
        sourceId: "s-2",
        collector: "A",
        startedAt: at,
        durationMs: 120,
        code: "not_modified",
        httpStatus: 304,
        bytes: 0,
        notModified: true,
        conditional: true,
        retry: 1,
        message: "ok",
      },
    });
    expectSameColumns(attempt, await columnsOf("fetch_attempts"));

    const status = {
      sourceId: "s-2",
      collector: "B",
      connected: true,
      lastActivityAt: at,
      lastActivityKind: "keepalive",
      lastContentAt: at,
      usualGapSeconds: 42.5,
      gapsSeen: 9,
      updatedAt: at,
    };
    const st = await db.prisma.collectorStatus.create({ data: status });
    expect(st).toEqual(status);
    expectSameColumns(st, await columnsOf("collector_status"));
    const withState = await db.prisma.source.findUniqueOrThrow({
      where: { id: "s-2" },
      include: { state: true, collectorStatus: true },
    });
    expect(withState.state?.etag).toBe('"abc"');
    expect(withState.collectorStatus).toHaveLength(1);
  });

  it("robots_cache and network_outages", async () => {
    const at = new Date("2026-06-12T09:00:00Z");
    const robots = {
      origin: "https://news.example:443",
      status: 200,
      body: "User-agent: *",
      fetchedAt: at,
      expiresAt: at,
    };
    const r = await db.prisma.robotsCache.create({ data: robots });
    expect(r).toEqual(robots);
    expectSameColumns(r, await columnsOf("robots_cache"));
    const outage = await db.prisma.networkOutage.create({
      data: { startedAt: at, endedAt: at, failingHosts: 9, totalHosts: 10, detail: "dns" },
    });
    expectSameColumns(outage, await columnsOf("network_outages"));
  });

  it("jobs, job_failures, lease_events, queue_workers and admin_audit", async () => {
    const at = new Date("2026-07-01T10:00:00Z");
    const job = {
      id: 1n,
      queue: "fetch",
      key: "s-1/A",
      payload: { sourceId: "s-1" },
      sourceId: "s-1",
      priority: 2,
      state: "leased",
      runAt: at,
      attempts: 1,
      maxAttempts: 5,
      leaseToken: "7f0b3c1e-4a52-4e7c-9a61-3b2d1c0e9f88",
      leaseOwner: "host:1:abc",
      leasedAt: at,
      leaseExpiresAt: at,
      leaseExpired: false,
      createdAt: at,
      enqueuedAt: at,
      firstFailedAt: null,
      lastFailedAt: null,
      lastError: null,
      fingerprint: null,
      deadAt: null,
      archivedAt: null,
      requeues: 0,
    };
    const { lastError, ...input } = job;
    const j = await db.prisma.job.create({ data: input });
    expect(j).toEqual({ ...job, lastError });
    expectSameColumns(j, await columnsOf("jobs"));
    // A leased job without a lease token is refused; so is a second live job with one key.
    await expect(
      db.prisma.job.create({ data: { queue: "fetch", key: "x", state: "leased" } }),
    ).rejects.toThrow();
    await expect(
      db.prisma.job.create({ data: { queue: "fetch", key: "s-1/A" } }),
    ).rejects.toThrow();

    const failure = await db.prisma.jobFailure.create({
      data: { jobId: 1n, queue: "fetch", attempt: 1, kind: "error", error: { message: "x" } },
    });
    expectSameColumns(failure, await columnsOf("job_failures"));
    const event = await db.prisma.leaseEvent.create({
      data: { jobId: 1n, queue: "fetch", attempt: 1, kind: "reclaimed", waitMs: 3 },
    });
    expectSameColumns(event, await columnsOf("lease_events"));
    const claims = await db.prisma.queueClaimStat.create({
      data: {
        queue: "fetch",
        minute: new Date("2026-12-01T10:00:00Z"),
        claims: 3n,
        reclaimed: 1n,
        waitMsSum: 120n,
        waitMsMax: 80,
        waitBuckets: [2n, 1n, ...new Array(14).fill(0n)],
      },
    });
    expectSameColumns(claims, await columnsOf("queue_claim_stats"));
    const depth = {
      queue: "fetch",
      minute: new Date("2026-12-01T10:00:00Z"),
      due: 4,
      running: 2,
      retrying: 1,
      dead: 3,
    };
    expect(await db.prisma.queueDepthSample.create({ data: depth })).toEqual(depth);
    expectSameColumns(depth, await columnsOf("queue_depth_samples"));
    const worker = await db.prisma.queueWorker.create({
      data: { id: "host:1:abc", host: "host", pid: 1, queues: ["fetch"] },
    });
    expectSameColumns(worker, await columnsOf("queue_workers"));
    const audit = await db.prisma.adminAudit.create({
      data: { actor: "ops", action: "requeue", target: { fingerprint: "f" }, affected: 3 },
    });
    expectSameColumns(audit, await columnsOf("admin_audit"));
  });

  it("admin_state", async () => {
    const data = {
      id: 1,
      sessionVersion: 3,
      cookieSecret: "s".repeat(43),
      passwordFingerprint: "f".repeat(64),
      updatedAt: new Date("2026-12-01T01:00:00Z"),
    };
    const created = await db.prisma.adminState.create({ data });
    expect(created).toEqual(data);
    expectSameColumns(created, await columnsOf("admin_state"));
    // One row only, and never a short secret.
    await expect(
      db.prisma.adminState.create({ data: { id: 2, cookieSecret: "s".repeat(43) } }),
    ).rejects.toThrow();
    await expect(
      db.prisma.adminState.update({ where: { id: 1 }, data: { cookieSecret: "short" } }),
    ).rejects.toThrow();
  });

  it("the story-API copy", async () => {
    await db.prisma.source.create({
      data: {
        id: "desk",
        name: "Story desk",
        kind: "story-api",
        url: "https://api.example/",
        tickers: ["ACME"],
        storyMode: "fetch",
        webhookSecrets: ["whsec_a", "whsec_b"],
      },
    });
    await expect(
      db.prisma.source.create({
        data: { id: "x", name: "x", kind: "story-api", storyMode: "both" },
      }),
    ).rejects.toThrow();
    const at = new Date("2026-12-01T02:00:00Z");
    const story = {
      sourceId: "desk",
      id: "st_1",
      ticker: "ACME",
      version: 3,
      closed: false,
      story: { id: "st_1", version: 3 },
      updatedAt: at,
    };
    expect(await db.prisma.story.create({ data: story })).toEqual(story);
    expectSameColumns(story, await columnsOf("stories"));
    // A closed row keeps no snapshot, an open one always has one.
    await expect(
      db.prisma.story.create({
        data: { sourceId: "desk", id: "st_2", version: 1, closed: true, story: {} },
      }),
    ).rejects.toThrow();
    const claim = { key: "strong:desk/st_1", sourceId: "desk", claimedAt: at, sentAt: at };
    expect(await db.prisma.claimed.create({ data: claim })).toEqual(claim);
    expectSameColumns(claim, await columnsOf("claimed"));
    const ticker = { sourceId: "desk", ticker: "ACME", addedAt: at, loadedAt: null };
    expect(await db.prisma.storyTicker.create({ data: ticker })).toEqual(ticker);
    expectSameColumns(ticker, await columnsOf("story_tickers"));
    const sync = {
      sourceId: "desk",
      cursor: "c1",
      cursorSavedAt: at,
      caughtUpAt: at,
      lastError: null,
      lastErrorAt: null,
      reloads: 1,
      reloadStartedAt: at,
      reloadFinishedAt: at,
      missedWebhooks: 2n,
      unlistedEvents: 0n,
    };
    expect(await db.prisma.storySync.create({ data: sync })).toEqual(sync);
    expectSameColumns(sync, await columnsOf("story_sync"));
    const event = {
      sourceId: "desk",
      eventId: "evt_1",
      type: "story.created",
      ticker: "ACME",
      publishedAt: at,
      webhookAt: at,
      webhookDeliveries: 2,
      catchupAt: null,
      appliedAt: at,
      reconciled: false,
    };
    expect(await db.prisma.storyEvent.create({ data: event })).toEqual(event);
    expectSameColumns(event, await columnsOf("story_events"));
    const rejection = {
      sourceId: "desk",
      reason: "bad_signature",
      count: 1n,
      firstAt: at,
      lastAt: at,
      lastWebhookId: "evt_9",
      lastDetail: "no signature matched",
    };
    expect(await db.prisma.storyWebhookRejection.create({ data: rejection })).toEqual(rejection);
    expectSameColumns(rejection, await columnsOf("story_webhook_rejections"));
    // Deleting the source takes its copy with it.
    await db.prisma.source.delete({ where: { id: "desk" } });
    expect(await db.prisma.story.count()).toBe(0);
  });

  it("the dedup tables and the line's cursors", async () => {
    const at = new Date("2026-07-01T10:00:00Z");
    const settings = {
      id: 1,
      thresholds: { windowHours: 72 },
      revision: 3,
      updatedAt: at,
      updatedBy: "ops",
    };
    expect(await db.prisma.dedupSettings.create({ data: settings })).toEqual(settings);
    expectSameColumns(settings, await columnsOf("dedup_settings"));
    // One row only.
    await expect(
      db.prisma.dedupSettings.create({ data: { id: 2, thresholds: {} } }),
    ).rejects.toThrow();

    const item = {
      entryKey: "a".repeat(64),
      version: 2,
      sourceId: "s-1",
      firstSeenAt: at,
      live: true,
      urlKey: "example.com/a",
      contentKey: "ff00",
      simhash: -9_000_000_000_000_000_000n,
      band0: 0,
      band1: 65_535,
      band2: 7,
      band3: 8,
      clusterId: 1n,
      outcome: "duplicate",
      stage: "near",
      settingsRevision: 3,
      decidedAt: at,
      decisionMs: 1.25,
      meaningVersion: null,
      meaningModelId: null,
    };
    expect(await db.prisma.dedupItem.create({ data: item })).toEqual(item);
    expectSameColumns(item, await columnsOf("dedup_items"));

    const anchorRow = { entryKey: item.entryKey, anchor: -123_456_789, firstSeenAt: at };
    expect(await db.prisma.dedupAnchor.create({ data: anchorRow })).toEqual(anchorRow);
    expectSameColumns(anchorRow, await columnsOf("dedup_anchors"));
    await expect(db.prisma.dedupAnchor.create({ data: anchorRow })).rejects.toThrow();

    const cluster = {
      id: 1n,
      canonicalKey: "b".repeat(64),
      members: 2,
      outlets: 2,
      firstSeenAt: at,
      createdAt: at,
      updatedAt: at,
      dissolvedAt: null,
    };
    expect(await db.prisma.dedupCluster.create({ data: cluster })).toEqual(cluster);
    expectSameColumns(cluster, await columnsOf("dedup_clusters"));
    const event = {
      id: 1n,
      clusterId: 1n,
      at,
      kind: "elected",
      entryKey: "b".repeat(64),
      detail: { why: "retracted" },
    };
    expect(await db.prisma.dedupClusterEvent.create({ data: event })).toEqual(event);
    expectSameColumns(event, await columnsOf("dedup_cluster_events"));

    const link = {
      id: 1n,
      entryKey: item.entryKey,
      duplicateOf: cluster.canonicalKey,
      matchedKey: cluster.canonicalKey,
      clusterId: 1n,
      stage: "near",
      score: 2,
      threshold: 3,
      settingsRevision: 3,
      itemVersion: 2,
      evidence: { shared: ["x"] },
      decidedAt: at,
      decidedBy: "dedup",
      endedAt: null,
      endedReason: null,
      endedBy: null,
    };
    expect(await db.prisma.dedupLink.create({ data: link })).toEqual(link);
    expectSameColumns(link, await columnsOf("dedup_links"));
    // One live link per item; an ended one may sit beside it.
    const { id: _id, ...again } = link;
    await expect(db.prisma.dedupLink.create({ data: again })).rejects.toThrow();
    await db.prisma.dedupLink.create({
      data: { ...again, endedAt: at, endedReason: "undone", endedBy: "ops" },
    });

    const review = {
      id: 1n,
      entryKey: item.entryKey,
      candidateKey: cluster.canonicalKey,
      pairA: item.entryKey,
      pairB: cluster.canonicalKey,
      stage: "near",
      score: 5,
      threshold: 3,
      itemVersion: 2,
      evidence: null,
      state: "pending",
      createdAt: at,
      decidedAt: null,
      decidedBy: null,
    };
    const { evidence: _e, ...reviewInput } = review;
    expect(await db.prisma.dedupReview.create({ data: reviewInput })).toEqual(review);
    expectSameColumns(review, await columnsOf("dedup_reviews"));
    const { id: _rid, ...sameReview } = reviewInput;
    await expect(db.prisma.dedupReview.create({ data: sameReview })).rejects.toThrow();

    const run = {
      id: 1n,
      thresholds: { windowHours: 48 },
      dryRun: true,
      state: "done",
      actor: "ops",
      startedAt: at,
      endedAt: at,
      total: 10,
      scanned: 10,
      appear: 1,
      go: 2,
      applied: 0,
      error: null,
    };
    expect(await db.prisma.dedupRun.create({ data: run })).toEqual(run);
    expectSameColumns(run, await columnsOf("dedup_runs"));
    const change = {
      runId: 1n,
      entryKey: item.entryKey,
      change: "go",
      before: { stage: "near" },
      after: { stage: null },
    };
    expect(await db.prisma.dedupRunChange.create({ data: change })).toEqual(change);
    expectSameColumns(change, await columnsOf("dedup_run_changes"));

    const cursor = { stage: "dedup", updatedAt: at, entryKey: "k", sweptAt: at };
    expect(await db.prisma.lineCursor.create({ data: cursor })).toEqual(cursor);
    expectSameColumns(cursor, await columnsOf("line_cursors"));
  });

  it("embedding models, item vectors, search documents, provider calls", async () => {
    const at = new Date("2026-12-17T10:00:00Z");
    const model = {
      id: 1,
      model: "shipped:use-lite@0.2.0",
      provider: "shipped",
      name: "use-lite",
      version: "0.2.0",
      dims: 512,
      kind: "meaning",
      languages: ["en"],
      crossLingual: false,
      meaningThreshold: 0.8,
      distinctThreshold: 0.4,
      calibration: { corpus: "msrp" },
      state: "complete",
      backfillStartedAt: at,
      backfillCompletedAt: at,
      createdAt: at,
      lastUsedAt: at,
    };
    expect(await db.prisma.embeddingModel.create({ data: model })).toEqual(model);
    expectSameColumns(model, await columnsOf("embedding_models"));

    // `code` (bit varying) and `tsv` (tsvector) are Unsupported in the client: written by SQL,
    // every other field read back through it.
    await db.prisma.$executeRaw`
      INSERT INTO item_vectors (model_id, entry_key, item_version, embedding, code, lang, source_id,
        first_seen_at, created_at)
      VALUES (1, 'k', 2, ARRAY[0.6, 0.8]::real[], B'11', 'en', 's-1', ${at}, ${at})`;
    const vector = {
      modelId: 1,
      entryKey: "k",
      itemVersion: 2,
      embedding: [0.6, 0.8],
      lang: "en",
      sourceId: "s-1",
      firstSeenAt: at,
      createdAt: at,
    };
    expect(await db.prisma.itemVector.findFirstOrThrow()).toEqual(vector);
    expectSameColumns({ ...vector, code: null }, await columnsOf("item_vectors"));

    await db.prisma.$executeRaw`
      INSERT INTO search_docs (entry_key, item_version, source_id, lang, first_seen_at, tsv, updated_at)
      VALUES ('k', 2, 's-1', 'en', ${at}, to_tsvector('simple', 'a story'), ${at})`;
    const doc = {
      entryKey: "k",
      itemVersion: 2,
      sourceId: "s-1",
      lang: "en",
      firstSeenAt: at,
      updatedAt: at,
    };
    expect(await db.prisma.searchDoc.findFirstOrThrow()).toEqual(doc);
    expectSameColumns({ ...doc, tsv: null }, await columnsOf("search_docs"));

    const call = {
      id: 1n,
      at,
      purpose: "embed",
      provider: "http",
      model: "http:text-embedding-3-small@api.example",
      ok: false,
      status: 429,
      error: "rate limited",
      items: 8,
      inputTokens: 120,
      outputTokens: 0,
      costUsd: 0.0000024,
      latencyMs: 12.5,
      attempt: 2,
      promptVersion: "extract-v1",
      outcome: "rate_limited",
      correction: true,
      entryKey: "k",
      itemVersion: 2,
      sourceId: "s-1",
    };
    expect(await db.prisma.providerCall.create({ data: call })).toEqual(call);
    expectSameColumns(call, await columnsOf("provider_calls"));

    const extraction = {
      entryKey: "k",
      itemVersion: 2,
      sourceId: "s-1",
      language: "en",
      category: "business",
      entities: [{ text: "Dhaka", type: "place" }],
      summary: "A story.",
      provider: "llm",
      model: "gpt-4o-mini",
      promptVersion: "extract-v1",
      extractor: "llm:gpt-4o-mini/extract-v1>local",
      fellOver: false,
      calls: 2,
      tokensIn: 300,
      tokensOut: 40,
      costUsd: 0.000069,
      extractedAt: at,
    };
    expect(await db.prisma.itemExtraction.create({ data: extraction })).toEqual(extraction);
    expectSameColumns(extraction, await columnsOf("item_extractions"));
  });

  it("read_stories, read_payloads, read_model_builds", async () => {
    const at = new Date("2026-12-02T08:00:00.000Z");
    const story = {
      storyKey: "k",
      sourceId: "s-1",
      itemVersion: 3,
      title: "Floods cut off 41 villages",
      link: "https://news.example/floods",
      summary: "Rivers rose overnight.",
      category: "weather",
      language: "en",
      breaking: true,
      outlets: [{ sourceId: "s-1", source: "Wire", link: "https://news.example/floods" }],
      outletCount: 1,
      publishedAt: at,
      firstSeenAt: at,
      fetchedAt: at,
      updatedAt: at,
      indexedAt: at,
    };
    expect(await db.prisma.readStory.create({ data: story })).toEqual(story);
    expectSameColumns(story, await columnsOf("read_stories"));

    const payload = {
      key: "news:home",
      modelVersion: 7n,
      etag: '"v7-home"',
      body: new Uint8Array(Buffer.from('{"items":[]}')),
      builtAt: at,
    };
    const stored = await db.prisma.readPayload.create({ data: payload });
    expect({ ...stored, body: Buffer.from(stored.body).toString() }).toEqual({
      ...payload,
      body: '{"items":[]}',
    });
    expectSameColumns(payload, await columnsOf("read_payloads"));

    const build = {
      id: 1n,
      modelVersion: 7n,
      startedAt: at,
      finishedAt: at,
      buildMs: 12.5,
      stories: 120,
      changed: 3,
      payloads: 40,
      bytes: 81_920n,
      lagP50Ms: 900,
      lagP99Ms: 2_400,
      trigger: "changed",
      error: null,
    };
    expect(await db.prisma.readModelBuild.create({ data: build })).toEqual(build);
    expectSameColumns(build, await columnsOf("read_model_builds"));
  });

  it("websub_subscriptions", async () => {
    const at = new Date("2026-12-02T09:00:00.000Z");
    const row = {
      sourceId: "s-1",
      state: "active",
      pendingMode: "subscribe",
      hub: "https://hub.example/",
      topic: "https://f.example/rss",
      token: "t".repeat(43),
      secret: "s",
      leaseSeconds: 600,
      requestedAt: at,
      verifiedAt: at,
      expiresAt: at,
      renewAt: at,
      checkedAt: at,
      pushes: 1n,
      lastPushAt: at,
      rejectedPushes: 2n,
      lastRejectedAt: at,
      lastRejection: "bad_signature: x",
      lastError: "e",
      createdAt: at,
      updatedAt: at,
    };
    expect(await db.prisma.websubSubscription.create({ data: row })).toEqual(row);
    expectSameColumns(row, await columnsOf("websub_subscriptions"));
  });

  it("fetch_attempts_daily", async () => {
    const row = {
      sourceId: "s-1",
      day: new Date("2026-11-01T00:00:00.000Z"),
      code: "ok",
      attempts: 288,
      bytes: 2_880_000n,
      durationMsSum: 28_800n,
      durationMsMax: 900,
    };
    expect(await db.prisma.fetchAttemptDaily.create({ data: row })).toEqual(row);
    expectSameColumns(row, await columnsOf("fetch_attempts_daily"));
  });

  it("page_looks", async () => {
    const row = {
      id: 1n,
      sourceId: "s-1",
      collector: "A",
      at: new Date("2026-12-02T09:00:00.000Z"),
      mode: "browser",
      code: "ok",
      wallMs: 1_200,
      cpuMs: 95,
      requests: 3,
      blocked: 1,
      blockedDetail: [{ url: "http://169.254.169.254/", reason: "blocked_ssrf: linkLocal" }],
      bytes: 4_096,
      headlines: 12,
      message: null,
    };
    expect(await db.prisma.pageLook.create({ data: row })).toEqual(row);
    expectSameColumns(row, await columnsOf("page_looks"));
  });

  it("has no table the schema does not know", async () => {
    const rows = await db.prisma.$queryRaw<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`;
    expect(rows.map((r) => r.table_name)).toEqual([
      "_prisma_migrations",
      "admin_audit",
      "admin_state",
      "claimed",
      "collector_status",
      "dedup_anchors",
      "dedup_cluster_events",
      "dedup_clusters",
      "dedup_items",
      "dedup_links",
      "dedup_reviews",
      "dedup_run_changes",
      "dedup_runs",
      "dedup_settings",
      "embedding_models",
      "fetch_attempts",
      "fetch_attempts_daily",
      "item_extractions",
      "item_vectors",
      "job_failures",
      "jobs",
      "lease_events",
      "line_cursors",
      "network_outages",
      "news",
      "news_events",
      "page_looks",
      "provider_calls",
      "queue_claim_stats",
      "queue_depth_samples",
      "queue_workers",
      "read_model_builds",
      "read_payloads",
      "read_stories",
      "repair_changes",
      "repair_runs",
      "robots_cache",
      "search_docs",
      "source_state",
      "sources",
      "stories",
      "story_events",
      "story_sync",
      "story_tickers",
      "story_webhook_rejections",
      "websub_subscriptions",
    ]);
  });
});
