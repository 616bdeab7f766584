import { type Config, config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { readModel } from "@/lib/readmodel/serve";
import { openReadModelStore } from "@/lib/readmodel/store";
import type { ReadModelStore } from "@/lib/readmodel/types";
import { CHAT_MODEL } from "@/simulator/chat";
import { type Simulator, startSimulator } from "@/simulator/server";
import { loadSourcesFile, type SourceConfig, sourceSchema } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { configuredMeaning } from "./embed/configured";
import { configuredExtraction } from "./extract/configured";
import { sharedBrowserPool } from "./fetcher/browser";
import { startWorkers, type Workers } from "./index";
import { forfeitLeases } from "./queue/forfeitLeases";
import { sweep } from "./queue/sweep";
import { startWebSub, type WebSub } from "./websub";

export interface Ingestion {
  simulator: Simulator | null;
  stop(): Promise<void>;
}

/**
 * Everything ingestion needs in one process, in order: the sources file synced into the
 * database, the newsroom simulator when nothing is configured on the embedded default (so a
 * newcomer sees live news within a minute of `npm start`), then the collectors.
 * stop() stops collecting first, then the simulator.
 */
export async function startIngestion(db: Database): Promise<Ingestion> {
  const log = logger().child({ part: "ingestion" });
  const settings = config();
  // A bad file, or a named one that is missing, throws here, before anything is synced: syncing
  // what could be read would switch off every file source the file still means to have.
  const fromFile: SourceConfig[] = await loadSourcesFile(settings.WIREWATCH_CONFIG);
  const fromDashboard = await db.prisma.source.count({
    where: { enabled: true, configOrigin: "dashboard" },
  });
  const wantSimulator =
    settings.WIREWATCH_SIMULATOR === "on" ||
    (settings.WIREWATCH_SIMULATOR === "auto" &&
      db.kind === "pglite" &&
      fromFile.length === 0 &&
      fromDashboard === 0);

  let simulator: Simulator | null = null;
  if (wantSimulator) {
    // With a WebSub callback configured its feeds advertise its hub, which pushes to this app.
    const websubHub = Boolean(settings.WIREWATCH_WEBSUB_CALLBACK_URL);
    simulator = await startSimulator({ port: settings.SIMULATOR_PORT, websubHub }).catch((err) => {
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
      log.warn({ port: settings.SIMULATOR_PORT }, "simulator port in use; taking a free one");
      return startSimulator({ port: 0, websubHub });
    });
    // Its story API delivers signed webhooks to this app, with the secret its source lists.
    const self = settings.WIREWATCH_URL ?? `http://127.0.0.1:${settings.PORT}`;
    const storySource = simulator.sources().find((s) => s.kind === "story-api");
    if (storySource) {
      simulator.control.stories.addWebhook({
        url: new URL(`/api/webhooks/stories?source=${storySource.id}`, self).href,
      });
    }
    log.info({ url: simulator.url }, "newsroom simulator started (no sources configured)");
  }
  // One sync with everything wanted: file sources that left the file, and the simulator's from a
  // previous run when it no longer runs, are switched off (their items and history stay).
  const simulated = simulator ? simulator.sources().map((s) => sourceSchema.parse(s)) : [];
  await syncSources(db, [...fromFile, ...simulated]);

  // An outage is declared and ended by the process that saw it; one left open by a process that
  // stopped would show forever. (With several worker processes this may close another's early;
  // it reopens on its next failing fetch.)
  await db.prisma.$executeRaw`
    UPDATE network_outages SET ended_at = now(), detail = concat_ws(' ', detail, '(closed at restart)')
    WHERE ended_at IS NULL`;

  if (db.kind === "pglite") await reclaimAbandonedLeases(db);

  // A collecting process has no line: no embedder, no extraction chain, no read model.
  const processes = settings.WIREWATCH_WORKER_ROLE !== "collect";
  const meaning = processes ? configuredMeaning(db) : null;
  // The embedded default's simulator serves a chat endpoint: with no chat server configured, the
  // chain asks it (llm → local), so costs show from the first minute.
  const extraction = processes
    ? configuredExtraction(
        db,
        simulator && !settings.WIREWATCH_EXTRACT_LLM_URL
          ? { url: `${simulator.url}/v1`, model: CHAT_MODEL }
          : undefined,
      )
    : null;
  const own = await ownsReadModel(db);
  // The builder writes into this process's read model store when ingestion runs on the process's
  // shared database (the app: it then serves what it built without a round trip); on any other
  // (a test's, a tool's) into a store of its own on that database, closed at stop.
  const readModelStore: ReadModelStore = own
    ? await readModel().store()
    : // No URL of its own: the table is reached through `db` itself.
      await openReadModelStore({ db, databaseUrl: undefined });
  let workers: Workers;
  try {
    workers = await startWorkers(db, {
      role: settings.WIREWATCH_WORKER_ROLE,
      fetchConcurrency: settings.WIREWATCH_FETCH_CONCURRENCY,
      meaning: meaning?.options,
      extract: extraction?.options,
      readModel: {
        store: readModelStore,
        intervalMs: settings.WIREWATCH_READ_MODEL_INTERVAL_MS,
        weights: {
          halfLifeHours: settings.WIREWATCH_RANK_HALF_LIFE_HOURS,
          outletWeight: settings.WIREWATCH_RANK_OUTLET_WEIGHT,
          breakingBoost: settings.WIREWATCH_RANK_BREAKING_BOOST,
        },
      },
    });
  } catch (err) {
    await extraction?.close();
    if (!own) await readModelStore.close();
    await simulator?.stop();
    throw err;
  }
  // WebSub only with a public callback address: without one no hub could reach us.
  const websub: WebSub | null = settings.WIREWATCH_WEBSUB_CALLBACK_URL
    ? startWebSub(db, {
        callbackBase: settings.WIREWATCH_WEBSUB_CALLBACK_URL,
        leaseSeconds: settings.WIREWATCH_WEBSUB_LEASE_SECONDS,
      })
    : null;
  return {
    simulator,
    stop: async () => {
      await websub?.stop();
      await workers.stop();
      // Renders still running were in the workers' jobs, which have stopped: Chromium may go.
      await sharedBrowserPool().close();
      await extraction?.close();
      await meaning?.options.embedder.close();
      await meaning?.ledger.close();
      if (!own) await readModelStore.close();
      await simulator?.stop();
    },
  };
}

/**
 * Whether this process should run ingestion, from WIREWATCH_WORKERS and the database kind
 * (PGlite exactly when DATABASE_URL is unset, as getDb() opens it), so it is known before the
 * database answers.
 */
export function ingestionRunsInline(settings: Config = config()): boolean {
  const mode = settings.WIREWATCH_WORKERS;
  return mode === "inline" || (mode === "auto" && !settings.DATABASE_URL);
}

/**
 * On the embedded database only this process can be running (the data directory is locked), so
 * every lease still held belongs to a process that stopped without handing it back (the web
 * server exits on SIGTERM without waiting): they are expired now and swept, instead of leaving
 * streams unwatched for a lease, and those workers are marked stopped.
 */
export async function reclaimAbandonedLeases(db: Database): Promise<void> {
  const expired = await forfeitLeases(db);
  if (expired > 0) {
    const swept = await sweep(db);
    logger().info({ expired, ...swept }, "leases of a previous run reclaimed");
  }
  await db.prisma.$executeRaw`
    UPDATE queue_workers SET state = 'stopped', stopped_at = seen_at, in_flight = 0
    WHERE state <> 'stopped'`;
}

/** Whether `db` is this process's shared database (getDb's), without opening one. */
async function ownsReadModel(db: Database): Promise<boolean> {
  const shared = (globalThis as { wirewatchDb?: Promise<Database> }).wirewatchDb;
  return shared !== undefined && (await shared.catch(() => null)) === db;
}
