import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { checkTexts } from "./checks";
import { ModelWorker } from "./modelWorker";
import { findPackage, searchRoots } from "./packages";
import {
  type EmbedBatch,
  type Embedder,
  EmbeddingError,
  type EmbedOptions,
  type ModelInfo,
} from "./types";

/**
 * A sentence-transformer in ONNX form that the operator put in a directory (decision 025): the
 * path to a multilingual model, Bangla and English, such as multilingual-e5-small,
 * paraphrase-multilingual-MiniLM-L12-v2 or LaBSE. It runs through @huggingface/transformers,
 * which is not a dependency (475 MB with onnxruntime's binaries): it is imported only when such
 * a directory is configured, with remote loading off, so nothing is ever fetched.
 *
 * The directory holds what a sentence-transformers export has: config.json, the tokenizer files
 * (tokenizer.json, tokenizer_config.json), onnx/model.onnx (or onnx/model_quantized.onnx), and
 * optionally modules.json with 1_Pooling/config.json (the pooling: mean or CLS; mean when absent)
 * and config_sentence_transformers.json (its `prompts`: e5's "query: " and "passage: "; for a
 * directory named like e5 without them, those two). A Dense module is refused: transformers.js
 * would leave it out and answer vectors of another model. An optional wirewatch.json,
 * { "languages": ["en", "bn"], "crossLingual": true }, says what the model reads; without it a
 * name with multilingual, LaBSE, xlm or m3 in it counts as English and Bangla, cross-lingual.
 *
 * Like the shipped model it runs in a worker thread (./modelWorker.ts), off the event loop, with
 * its timeouts and restarts.
 */
export const ONNX_INSTALL_HINT =
  "ONNXRUNTIME_NODE_INSTALL=skip npm install @huggingface/transformers";

export interface OnnxOptions {
  /** The model's directory. */
  directory: string;
  /**
   * Where @huggingface/transformers is installed (its entry file); default: resolved from the
   * project, as npm installed it.
   */
  packagePath?: string;
}

/** What the directory says about the model, read at construction (small files only). */
export interface OnnxModelFiles {
  name: string;
  dims: number;
  pooling: "mean" | "cls";
  dtype: "fp32" | "q8";
  prompts: { query: string; passage: string };
  languages: string[];
  crossLingual: boolean;
  fingerprint: string;
}

const BATCH_SIZE = 32;
// Loading a 100-500 MB ONNX session takes seconds; a few minutes only catches a hang.
const LOAD_TIMEOUT_MS = 180_000;
// MiniLM-class models take a few ms a sentence on one core, base-size ones 10-30 ms; the same
// budget as the shipped model's (1 ms a character plus 15 s) leaves them a wide margin.
const JOB_BASE_MS = 15_000;
const JOB_MS_PER_CHAR = 1;

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const started = performance.now();
let extractor;
const loading = (async () => {
  const url = workerData.packageUrl || require("node:url").pathToFileURL(
    require.resolve("@huggingface/transformers", { paths: workerData.searchRoots }),
  ).href;
  const transformers = await import(url);
  const env = transformers.env;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = workerData.modelsRoot;
  extractor = await transformers.pipeline("feature-extraction", workerData.name, {
    dtype: workerData.dtype,
    local_files_only: true,
  });
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
    if (!extractor) throw Object.assign(new Error("the model is not loaded"), { code: "unavailable" });
    const prefix = job.purpose === "query" ? workerData.prompts.query : workerData.prompts.passage;
    const output = await extractor(job.texts.map((t) => prefix + t), {
      pooling: workerData.pooling,
      normalize: true,
    });
    const shape = output.dims;
    if (shape.length !== 2 || shape[0] !== job.texts.length || shape[1] !== dims) {
      throw Object.assign(new Error("an output of shape [" + shape.join(", ") + "], expected [" + job.texts.length + ", " + dims + "]"), { code: "invalid_answer" });
    }
    const out = Float32Array.from(output.data);
    for (let r = 0; r < job.texts.length; r++) {
      let sum = 0;
      for (let i = 0; i < dims; i++) sum += out[r * dims + i] * out[r * dims + i];
      if (!Number.isFinite(sum) || sum === 0) {
        throw Object.assign(new Error("text " + r + " has no unit vector"), { code: "invalid_answer" });
      }
      const scale = 1 / Math.sqrt(sum);
      for (let i = 0; i < dims; i++) out[r * dims + i] *= scale;
    }
    parentPort.postMessage({ type: "done", id: job.id, vectors: out }, [out.buffer]);
  } catch (err) {
    parentPort.postMessage({ type: "failed", id: job.id, message: String((err && err.message) || err), code: err && err.code });
  }
}
`;

function unavailable(message: string): EmbeddingError {
  return new EmbeddingError(message, "unavailable");
}

function readJson(file: string): Record<string, unknown> | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw unavailable(`${file} is not JSON: ${(err as Error).message}`);
  }
}

/**
 * Reads the directory's description of the model; an EmbeddingError("unavailable") naming what
 * is missing or unusable.
 */
export function readOnnxDirectory(directory: string): OnnxModelFiles {
  const dir = path.resolve(directory);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw unavailable(
      `no ONNX model directory at ${dir}: put a sentence-transformers ONNX export there ` +
        "(config.json, tokenizer.json, onnx/model.onnx)",
    );
  }
  const config = readJson(path.join(dir, "config.json"));
  if (!config) throw unavailable(`${dir} has no config.json: is it a model directory?`);
  if (!existsSync(path.join(dir, "tokenizer.json"))) {
    throw unavailable(`${dir} has no tokenizer.json`);
  }
  const fp32 = path.join(dir, "onnx", "model.onnx");
  const q8 = path.join(dir, "onnx", "model_quantized.onnx");
  const weights = existsSync(fp32) ? fp32 : existsSync(q8) ? q8 : undefined;
  if (!weights)
    throw unavailable(`${dir} has neither onnx/model.onnx nor onnx/model_quantized.onnx`);

  const modules = (readJson(path.join(dir, "modules.json")) ?? []) as unknown as {
    type?: string;
    path?: string;
  }[];
  if (!Array.isArray(modules)) throw unavailable(`${dir}/modules.json is not a list of modules`);
  const dense = modules.find((m) => /Dense$/.test(m.type ?? ""));
  if (dense) {
    throw unavailable(
      `${dir} has a Dense module (${dense.path}) after pooling, which transformers.js does not ` +
        "apply: its vectors would not be the model's. Use a model without one.",
    );
  }
  const poolingPath = modules.find((m) => /Pooling$/.test(m.type ?? ""))?.path ?? "1_Pooling";
  const poolingConfig = readJson(path.join(dir, poolingPath, "config.json"));
  let pooling: "mean" | "cls" = "mean";
  if (poolingConfig) {
    if (poolingConfig.pooling_mode_cls_token === true) pooling = "cls";
    else if (poolingConfig.pooling_mode_mean_tokens !== true) {
      const mode = Object.keys(poolingConfig).find(
        (k) => k.startsWith("pooling_mode_") && poolingConfig[k] === true,
      );
      throw unavailable(
        `${dir}: pooling ${mode ?? "(none set)"} is not supported; mean and CLS are`,
      );
    }
  }
  const dims = Number(
    poolingConfig?.word_embedding_dimension ?? config.hidden_size ?? config.d_model,
  );
  if (!Number.isInteger(dims) || dims < 1) {
    throw unavailable(
      `${dir}/config.json gives no hidden_size: the vectors' dimensions are unknown`,
    );
  }

  const name = path.basename(dir);
  const st = readJson(path.join(dir, "config_sentence_transformers.json"));
  const stPrompts = (st?.prompts ?? {}) as Record<string, unknown>;
  const e5 = /(^|[-_.])e5([-_.]|$)/i.test(name);
  const prompts = {
    query: typeof stPrompts.query === "string" ? stPrompts.query : e5 ? "query: " : "",
    passage: typeof stPrompts.passage === "string" ? stPrompts.passage : e5 ? "passage: " : "",
  };

  const declared = readJson(path.join(dir, "wirewatch.json"));
  const multilingual = /multilingual|labse|xlm|(^|[-_])m3([-_]|$)/i.test(name);
  const languages = Array.isArray(declared?.languages)
    ? (declared.languages as unknown[]).filter((l): l is string => typeof l === "string")
    : multilingual
      ? ["en", "bn"]
      : ["en"];
  const crossLingual =
    typeof declared?.crossLingual === "boolean" ? declared.crossLingual : multilingual;

  return {
    name,
    dims,
    pooling,
    dtype: weights === fp32 ? "fp32" : "q8",
    prompts,
    languages,
    crossLingual,
    fingerprint: fingerprint(dir, weights),
  };
}

/**
 * The model's version in its id: a digest of its small files (config, tokenizer, pooling,
 * prompts) and of the weights' size and first and last MiB. Not a hash of every weight byte
 * (500 MB would take seconds at each start), but a re-export, another checkpoint or another
 * quantisation changes it, so its vectors are stored as another model's.
 */
function fingerprint(dir: string, weights: string): string {
  const hash = createHash("sha256");
  for (const file of [
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "modules.json",
    "1_Pooling/config.json",
    "config_sentence_transformers.json",
  ]) {
    const full = path.join(dir, file);
    hash.update(`${file}\u0000`);
    if (existsSync(full)) hash.update(readFileSync(full));
  }
  const size = statSync(weights).size;
  hash.update(`${path.basename(weights)}\u0000${size}\u0000`);
  const edge = Math.min(size, 1 << 20);
  const fd = openSync(weights, "r");
  try {
    const buffer = Buffer.alloc(edge);
    readSync(fd, buffer, 0, edge, 0);
    hash.update(buffer);
    readSync(fd, buffer, 0, edge, size - edge);
    hash.update(buffer);
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex").slice(0, 12);
}

/** The package's entry as a file URL when given, null to let the worker resolve it. */
function checkTransformers(packagePath: string | undefined): string | null {
  if (packagePath !== undefined) {
    if (!existsSync(packagePath)) {
      throw unavailable(`@huggingface/transformers is not at ${packagePath}`);
    }
    return pathToFileURL(path.resolve(packagePath)).href;
  }
  if (findPackage("@huggingface/transformers")) return null;
  throw unavailable(
    "an ONNX model directory is configured, but @huggingface/transformers, which runs it, is " +
      `not installed. Install it with: ${ONNX_INSTALL_HINT}`,
  );
}

export class OnnxEmbedder implements Embedder {
  readonly info: ModelInfo;
  readonly files: OnnxModelFiles;
  private worker: ModelWorker | undefined;

  /** Reads the directory and finds the package; the model loads on the first call. */
  constructor(options: OnnxOptions) {
    this.files = readOnnxDirectory(options.directory);
    const packageUrl = checkTransformers(options.packagePath);
    const dir = path.resolve(options.directory);
    const { name, dims } = this.files;
    this.info = {
      model: `onnx:${name}@${this.files.fingerprint}`,
      provider: "onnx",
      name,
      version: this.files.fingerprint,
      dims,
      kind: "meaning",
      languages: this.files.languages,
      crossLingual: this.files.crossLingual,
    };
    this.worker = new ModelWorker({
      name: `the ONNX model ${name} (${dir})`,
      source: WORKER_SOURCE,
      workerData: {
        packageUrl,
        searchRoots: searchRoots(),
        // transformers.js finds a local model as <localModelPath>/<name>/.
        modelsRoot: `${path.dirname(dir)}${path.sep}`,
        name,
        dims,
        dtype: this.files.dtype,
        pooling: this.files.pooling,
        prompts: this.files.prompts,
      },
      dims,
      batchSize: BATCH_SIZE,
      loadTimeoutMs: LOAD_TIMEOUT_MS,
      jobTimeoutMs: (texts) =>
        JOB_BASE_MS + JOB_MS_PER_CHAR * texts.reduce((n, t) => n + t.length, 0),
    });
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<EmbedBatch> {
    if (!this.worker) throw unavailable(`${this.info.model} is closed`);
    checkTexts(texts);
    // Stored items are passages; only a search's query says otherwise.
    const purpose = options.purpose ?? "passage";
    const vectors = await this.worker.embed(texts, purpose, options.signal);
    return { model: this.info, vectors };
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.close();
  }
}
