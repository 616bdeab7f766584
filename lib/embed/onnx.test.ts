import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ONNX_INSTALL_HINT, OnnxEmbedder, readOnnxDirectory } from "./onnx";

// No ONNX weights exist on this machine and @huggingface/transformers is not installed (decision
// 025), so these tests cover what can be checked without them: reading a model directory, and
// every way of failing with a clear EmbeddingError("unavailable"). The directories are written
// here with the files a sentence-transformers export has; the weights file is a stand-in of a
// few bytes, never loaded.

const root = mkdtempSync(path.join(tmpdir(), "wirewatch-onnx-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Layout {
  config?: object | null;
  tokenizer?: boolean;
  weights?: "model.onnx" | "model_quantized.onnx" | null;
  modules?: object[];
  pooling?: object;
  sentenceTransformers?: object;
  wirewatch?: object;
}

function modelDir(name: string, layout: Layout = {}): string {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, "onnx"), { recursive: true });
  if (layout.config !== null) {
    writeFileSync(
      path.join(dir, "config.json"),
      JSON.stringify(layout.config ?? { hidden_size: 384 }),
    );
  }
  if (layout.tokenizer !== false) writeFileSync(path.join(dir, "tokenizer.json"), "{}");
  if (layout.weights !== null) {
    writeFileSync(path.join(dir, "onnx", layout.weights ?? "model.onnx"), `weights of ${name}`);
  }
  if (layout.modules) writeFileSync(path.join(dir, "modules.json"), JSON.stringify(layout.modules));
  if (layout.pooling) {
    mkdirSync(path.join(dir, "1_Pooling"), { recursive: true });
    writeFileSync(path.join(dir, "1_Pooling", "config.json"), JSON.stringify(layout.pooling));
  }
  if (layout.sentenceTransformers) {
    writeFileSync(
      path.join(dir, "config_sentence_transformers.json"),
      JSON.stringify(layout.sentenceTransformers),
    );
  }
  if (layout.wirewatch)
    writeFileSync(path.join(dir, "wirewatch.json"), JSON.stringify(layout.wirewatch));
  return dir;
}

const ST_MODULES = [
  { idx: 0, name: "0", path: "", type: "sentence_transformers.models.Transformer" },
  { idx: 1, name: "1", path: "1_Pooling", type: "sentence_transformers.models.Pooling" },
  { idx: 2, name: "2", path: "2_Normalize", type: "sentence_transformers.models.Normalize" },
];

describe("ONNX model directory", () => {
  it("reads an e5 export: mean pooling, its dimensions, query/passage prefixes, Bangla + English", () => {
    const dir = modelDir("multilingual-e5-small", {
      modules: ST_MODULES,
      pooling: { word_embedding_dimension: 384, pooling_mode_mean_tokens: true },
    });
    expect(readOnnxDirectory(dir)).toMatchObject({
      name: "multilingual-e5-small",
      dims: 384,
      pooling: "mean",
      dtype: "fp32",
      prompts: { query: "query: ", passage: "passage: " },
      languages: ["en", "bn"],
      crossLingual: true,
      fingerprint: expect.stringMatching(/^[0-9a-f]{12}$/),
    });
  });

  it("takes CLS pooling, quantised weights, the prompts and languages the directory declares", () => {
    const dir = modelDir("my-encoder", {
      config: { hidden_size: 768 },
      weights: "model_quantized.onnx",
      modules: ST_MODULES,
      pooling: { word_embedding_dimension: 768, pooling_mode_cls_token: true },
      sentenceTransformers: { prompts: { query: "Represent this query: ", passage: "" } },
      wirewatch: { languages: ["en", "bn", "hi"], crossLingual: false },
    });
    expect(readOnnxDirectory(dir)).toMatchObject({
      dims: 768,
      pooling: "cls",
      dtype: "q8",
      prompts: { query: "Represent this query: ", passage: "" },
      languages: ["en", "bn", "hi"],
      crossLingual: false,
    });
    // An English model by its name, with no prompts: no prefixes, English only.
    expect(readOnnxDirectory(modelDir("all-MiniLM-L6-v2"))).toMatchObject({
      prompts: { query: "", passage: "" },
      languages: ["en"],
      crossLingual: false,
    });
  });

  it("gives another fingerprint, so another model id, when the weights change", () => {
    const a = readOnnxDirectory(modelDir("model-a")).fingerprint;
    const dir = modelDir("model-b");
    const b = readOnnxDirectory(dir).fingerprint;
    writeFileSync(path.join(dir, "onnx", "model.onnx"), "re-exported weights");
    expect(new Set([a, b, readOnnxDirectory(dir).fingerprint]).size).toBe(3);
  });

  it("says what is missing or unusable", () => {
    const unavailable = (dir: string, message: RegExp) => {
      expect(() => readOnnxDirectory(dir)).toThrow(message);
      try {
        readOnnxDirectory(dir);
      } catch (err) {
        expect(err).toMatchObject({ name: "EmbeddingError", code: "unavailable" });
      }
    };
    unavailable(path.join(root, "absent"), /no ONNX model directory at .*absent/);
    unavailable(modelDir("no-config", { config: null }), /has no config\.json/);
    unavailable(modelDir("no-tokenizer", { tokenizer: false }), /has no tokenizer\.json/);
    unavailable(modelDir("no-weights", { weights: null }), /neither onnx\/model\.onnx nor/);
    unavailable(modelDir("no-size", { config: { model_type: "bert" } }), /gives no hidden_size/);
    unavailable(
      modelDir("distiluse-base-multilingual-cased-v2", {
        modules: [
          ...ST_MODULES.slice(0, 2),
          { path: "2_Dense", type: "sentence_transformers.models.Dense" },
        ],
      }),
      /has a Dense module \(2_Dense\)/,
    );
    unavailable(
      modelDir("max-pooled", { modules: ST_MODULES, pooling: { pooling_mode_max_tokens: true } }),
      /pooling pooling_mode_max_tokens is not supported/,
    );
    const broken = modelDir("broken-json");
    writeFileSync(path.join(broken, "config.json"), "{ not json");
    unavailable(broken, /config\.json is not JSON/);
  });
});

describe("OnnxEmbedder", () => {
  it("without @huggingface/transformers installed: unavailable, saying how to install it", () => {
    const dir = modelDir("multilingual-e5-base");
    expect(() => new OnnxEmbedder({ directory: dir })).toThrow(
      "an ONNX model directory is configured, but @huggingface/transformers, which runs it, is " +
        `not installed. Install it with: ${ONNX_INSTALL_HINT}`,
    );
    expect(ONNX_INSTALL_HINT).toBe(
      "ONNXRUNTIME_NODE_INSTALL=skip npm install @huggingface/transformers",
    );
  });

  it("a package that cannot be imported fails the load with unavailable, from the worker", async () => {
    const dir = modelDir("multilingual-e5-large");
    const entry = path.join(root, "broken-transformers.mjs");
    writeFileSync(entry, 'throw new Error("this build of transformers is broken");\n');
    const embedder = new OnnxEmbedder({ directory: dir, packagePath: entry });
    try {
      expect(embedder.info).toMatchObject({
        model: expect.stringMatching(/^onnx:multilingual-e5-large@[0-9a-f]{12}$/),
        provider: "onnx",
        dims: 384,
        kind: "meaning",
        languages: ["en", "bn"],
      });
      await expect(embedder.embed(["query text"], { purpose: "query" })).rejects.toMatchObject({
        name: "EmbeddingError",
        code: "unavailable",
        message: expect.stringMatching(/cannot load: this build of transformers is broken/),
      });
      await expect(embedder.embed([""])).rejects.toMatchObject({ code: "bad_input" });
    } finally {
      await embedder.close();
    }
    expect(
      () => new OnnxEmbedder({ directory: dir, packagePath: path.join(root, "nope.mjs") }),
    ).toThrow(/@huggingface\/transformers is not at/);
  });
});
