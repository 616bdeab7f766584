import { Worker } from "node:worker_threads";
import { EmbeddingError } from "./types";

/**
 * A model running in a worker thread, so that embedding (13-70 ms of CPU a sentence for USE-lite)
 * never blocks the event loop, and the second core does the work.
 *
 * The worker is plain JavaScript handed over as source (`eval`), not a file: the same code then
 * runs under tsx, vitest and a Next.js server bundle, none of which agree on how a TypeScript
 * worker file is found. It speaks this protocol:
 *
 *   worker → host  { type: "ready", loadMs }            once the model is loaded
 *                  { type: "load_failed", message }     the model cannot load (then it idles)
 *                  { type: "done", id, vectors }        vectors: one Float32Array, texts × dims
 *                  { type: "failed", id, message, code } code: an EmbeddingError code
 *   host → worker  { id, texts, purpose }               at most one job at a time
 *
 * Calls are cut into chunks of at most `batchSize` texts, and chunks of several calls waiting
 * together (of one purpose) go to the worker as one job (USE-lite: 74 texts/s in batches of 32 against 51 one at
 * a time, decision 025). One job runs at a time, so its timeout measures that job alone. A job
 * that runs out of time, or a worker that dies, fails the calls it carried with
 * EmbeddingError("provider_error"); the worker is terminated and a new one is started for the
 * next job. A model that cannot load fails every waiting call with "unavailable", and the next
 * call tries again.
 */
export interface ModelWorkerOptions {
  /** Names the model in errors: "the shipped model (USE-lite)". */
  name: string;
  /** The worker's CommonJS source. */
  source: string;
  workerData?: unknown;
  dims: number;
  /** Texts per job at most. */
  batchSize: number;
  loadTimeoutMs: number;
  /** How long a job may take, from its texts. */
  jobTimeoutMs: (texts: readonly string[]) => number;
}

export interface ModelWorkerStats {
  /** Workers started (1 unless one crashed, hung or failed to load). */
  starts: number;
  /** The last load's time, from the worker's start to its model being ready. */
  loadMs: number | null;
  jobs: number;
  texts: number;
  crashes: number;
  timeouts: number;
}

interface Call {
  texts: readonly string[];
  purpose: string | undefined;
  vectors: (Float32Array | undefined)[];
  /** Chunks not yet answered. */
  pending: number;
  settled: boolean;
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Chunk {
  call: Call;
  /** Where its texts start in the call. */
  offset: number;
  texts: readonly string[];
}

type FromWorker =
  | { type: "ready"; loadMs: number }
  | { type: "load_failed"; message: string }
  | { type: "done"; id: number; vectors: Float32Array }
  | { type: "failed"; id: number; message: string; code?: EmbeddingError["code"] };

interface Running {
  worker: Worker;
  ready: boolean;
  /** The job in flight. */
  job?: { id: number; chunks: Chunk[]; timer: NodeJS.Timeout };
  loadTimer?: NodeJS.Timeout;
}

export class ModelWorker {
  readonly stats: ModelWorkerStats = {
    starts: 0,
    loadMs: null,
    jobs: 0,
    texts: 0,
    crashes: 0,
    timeouts: 0,
  };
  private readonly queue: Chunk[] = [];
  private running: Running | undefined;
  private nextJobId = 1;
  private closed = false;

  constructor(private readonly options: ModelWorkerOptions) {}

  /** One vector per text, in order, as the worker made them. */
  embed(texts: readonly string[], purpose?: string, signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.closed) {
      return Promise.reject(new EmbeddingError(`${this.options.name} is closed`, "unavailable"));
    }
    signal?.throwIfAborted();
    return new Promise<Float32Array[]>((resolve, reject) => {
      const size = this.options.batchSize;
      const call: Call = {
        texts,
        purpose,
        vectors: new Array(texts.length),
        pending: Math.ceil(texts.length / size),
        settled: false,
        resolve,
        reject,
        ...(signal ? { signal } : {}),
      };
      for (let offset = 0; offset < texts.length; offset += size) {
        this.queue.push({ call, offset, texts: texts.slice(offset, offset + size) });
      }
      if (signal) {
        call.onAbort = () => this.fail(call, signal.reason);
        signal.addEventListener("abort", call.onAbort, { once: true });
      }
      this.pump();
    });
  }

  /** Fails what waits, stops the worker. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    const error = new EmbeddingError(`${this.options.name} was closed`, "unavailable");
    for (const chunk of this.queue.splice(0)) this.fail(chunk.call, error);
    const running = this.running;
    if (running?.job) for (const chunk of running.job.chunks) this.fail(chunk.call, error);
    await this.stop();
  }

  private pump(): void {
    if (this.closed) return;
    this.dropSettled();
    if (this.queue.length === 0) {
      // Idle, the worker must not keep the process alive (a CLI exits when its work is done).
      if (!this.running?.job) this.running?.worker.unref();
      return;
    }
    const running = this.running ?? this.start();
    // A worker with work to do keeps the process alive until the answer comes.
    running.worker.ref();
    if (!running.ready || running.job) return;

    const first = this.queue.shift() as Chunk;
    const chunks: Chunk[] = [first];
    let texts = first.texts.length;
    while (this.queue.length > 0) {
      const next = this.queue[0] as Chunk;
      // A job has one purpose: e5-style models prefix queries and passages differently.
      if (next.call.purpose !== first.call.purpose) break;
      if (texts + next.texts.length > this.options.batchSize) break;
      chunks.push(this.queue.shift() as Chunk);
      texts += next.texts.length;
    }
    const all = chunks.flatMap((c) => c.texts);
    const id = this.nextJobId++;
    const ms = this.options.jobTimeoutMs(all);
    const timer = setTimeout(() => {
      this.stats.timeouts++;
      void this.lose(
        new EmbeddingError(`${this.options.name} gave no answer within ${ms} ms`, "provider_error"),
      );
    }, ms);
    running.job = { id, chunks, timer };
    this.stats.jobs++;
    this.stats.texts += all.length;
    running.worker.postMessage({ id, texts: all, purpose: first.call.purpose });
  }

  private start(): Running {
    const worker = new Worker(this.options.source, {
      eval: true,
      workerData: this.options.workerData,
      // The worker's console goes to our stderr, never stdout: `cli embed` prints JSON there.
      stdout: true,
    });
    worker.stdout.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    const running: Running = { worker, ready: false };
    this.running = running;
    this.stats.starts++;
    const ms = this.options.loadTimeoutMs;
    running.loadTimer = setTimeout(() => {
      void this.unavailable(
        running,
        `${this.options.name} did not load within ${ms} ms; the next call tries again`,
      );
    }, ms);
    worker.on("message", (message: FromWorker) => this.onMessage(running, message));
    worker.on("error", (err) => void this.crashed(running, err));
    worker.on("exit", (code) => {
      if (this.running === running) {
        void this.crashed(running, new Error(`the worker thread exited with code ${code}`));
      }
    });
    return running;
  }

  private onMessage(running: Running, message: FromWorker): void {
    if (this.running !== running) return;
    if (message.type === "ready") {
      clearTimeout(running.loadTimer);
      running.ready = true;
      this.stats.loadMs = message.loadMs;
      this.pump();
      return;
    }
    if (message.type === "load_failed") {
      void this.unavailable(running, `${this.options.name} cannot load: ${message.message}`);
      return;
    }
    const job = running.job;
    if (!job || job.id !== message.id) return;
    clearTimeout(job.timer);
    running.job = undefined;
    if (message.type === "failed") {
      const error = new EmbeddingError(
        `${this.options.name}: ${message.message}`,
        message.code ?? "provider_error",
      );
      for (const chunk of job.chunks) this.fail(chunk.call, error);
    } else {
      this.deliver(job.chunks, message.vectors);
    }
    this.pump();
  }

  private deliver(chunks: Chunk[], flat: Float32Array): void {
    const { dims } = this.options;
    const texts = chunks.reduce((n, c) => n + c.texts.length, 0);
    if (flat.length !== texts * dims) {
      const error = new EmbeddingError(
        `${this.options.name} answered ${flat.length} numbers for ${texts} texts of ${dims} dimensions`,
        "invalid_answer",
      );
      for (const chunk of chunks) this.fail(chunk.call, error);
      return;
    }
    let at = 0;
    for (const chunk of chunks) {
      const { call } = chunk;
      for (let i = 0; i < chunk.texts.length; i++, at++) {
        call.vectors[chunk.offset + i] = flat.slice(at * dims, (at + 1) * dims);
      }
      if (call.settled) continue;
      call.pending--;
      if (call.pending === 0) {
        call.settled = true;
        this.release(call);
        call.resolve(call.vectors as Float32Array[]);
      }
    }
  }

  private fail(call: Call, error: unknown): void {
    if (call.settled) return;
    call.settled = true;
    this.release(call);
    call.reject(error);
  }

  private release(call: Call): void {
    if (call.onAbort) call.signal?.removeEventListener("abort", call.onAbort);
  }

  /** Chunks of calls that already failed (aborted, or a sibling chunk was lost) are not sent. */
  private dropSettled(): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i]?.call.settled) this.queue.splice(i, 1);
    }
  }

  /** The worker died: its job's calls fail; the rest wait for a new worker. */
  private async crashed(running: Running, err: Error): Promise<void> {
    if (this.running !== running) return;
    this.stats.crashes++;
    await this.lose(
      new EmbeddingError(`${this.options.name} stopped: ${err.message}`, "provider_error", {
        cause: err,
      }),
    );
  }

  /** The job in flight fails with `error`; the worker is replaced for what waits. */
  private async lose(error: EmbeddingError): Promise<void> {
    const job = this.running?.job;
    if (job) for (const chunk of job.chunks) this.fail(chunk.call, error);
    await this.stop();
    this.pump();
  }

  /** The model cannot load: every waiting call fails; the next call starts a worker again. */
  private async unavailable(running: Running, message: string): Promise<void> {
    if (this.running !== running) return;
    const error = new EmbeddingError(message, "unavailable");
    for (const chunk of this.queue.splice(0)) this.fail(chunk.call, error);
    await this.stop();
  }

  private async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    clearTimeout(running.loadTimer);
    if (running.job) clearTimeout(running.job.timer);
    running.worker.removeAllListeners("exit");
    await running.worker.terminate();
  }
}
