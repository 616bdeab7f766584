import { afterAll, describe, expect, it } from "vitest";
import { SHIPPED_MODEL, ShippedEmbedder } from "./shipped";
import { cosine } from "./vector";

// The real USE-lite model, from node_modules (28 MB of weights, loaded in a worker thread).
const embedder = new ShippedEmbedder();
afterAll(() => embedder.close());

const norm = (v: Float32Array) => Math.hypot(...v);

describe("shipped embedder (USE-lite in a worker thread)", () => {
  it("answers 512-dimensional unit vectors labelled with the shipped model", async () => {
    const batch = await embedder.embed(["Fed raises interest rates", "ঢাকায় ১২ জন নিহত"]);
    expect(batch.model).toEqual(SHIPPED_MODEL);
    expect(batch.model).toMatchObject({
      model: "shipped:use-lite@0.2.0",
      kind: "meaning",
      languages: ["en"],
    });
    expect(batch.vectors).toHaveLength(2);
    for (const v of batch.vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(512);
      expect(norm(v)).toBeCloseTo(1, 4);
    }
  });

  it("puts a paraphrase nearer than an unrelated headline", async () => {
    const [a, b, c] = (
      await embedder.embed([
        "The central bank raised interest rates on Tuesday",
        "Interest rates were increased by the central bank",
        "Heavy rain floods villages near the river",
      ])
    ).vectors as [Float32Array, Float32Array, Float32Array];
    expect(cosine(a, b)).toBeGreaterThan(0.7);
    expect(cosine(a, b) - cosine(a, c)).toBeGreaterThan(0.3);
  });

  it("gives each text the vector it gets alone, whatever it is batched with", async () => {
    const texts = Array.from(
      { length: 40 },
      (_, i) => `Headline number ${i} about the port strike`,
    );
    const together = (await embedder.embed(texts)).vectors;
    const alone = await Promise.all(texts.slice(0, 5).map((t) => embedder.embed([t])));
    alone.forEach((b, i) => {
      expect(cosine(b.vectors[0] as Float32Array, together[i] as Float32Array)).toBeGreaterThan(
        0.9999,
      );
    });
  });

  it("loads the model once per process: embedders share one worker", async () => {
    const second = new ShippedEmbedder();
    try {
      await second.embed(["another caller"]);
      expect(second.stats).toBe(embedder.stats);
      expect(embedder.stats.starts).toBe(1);
      expect(embedder.stats.loadMs).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
    // Closing one embedder leaves the others' worker running.
    await expect(embedder.embed(["still here"])).resolves.toMatchObject({ model: SHIPPED_MODEL });
  });

  it("keeps the event loop free while it embeds", async () => {
    await embedder.embed(["warm"]);
    const texts = Array.from(
      { length: 64 },
      (_, i) => `Officials said on day ${i} that the flood waters were receding slowly`,
    );
    let worst = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    await embedder.embed(texts);
    const took = performance.now() - started;
    clearInterval(tick);
    // In this thread the 64 texts would block the loop for all of `took` (two batches of 32,
    // each hundreds of ms); from the worker only message passing runs here.
    expect(took).toBeGreaterThan(200);
    expect(worst).toBeLessThan(Math.max(150, took / 4));
  });

  it("refuses an empty text before it reaches the model", async () => {
    const before = embedder.stats.texts;
    await expect(embedder.embed(["fine", ""])).rejects.toMatchObject({ code: "bad_input" });
    expect(embedder.stats.texts).toBe(before);
  });

  it("turns a job past its time into provider_error, not a hang", async () => {
    const impatient = new ShippedEmbedder({ jobTimeoutMs: 1 });
    try {
      await expect(impatient.embed(["too slow for one millisecond"])).rejects.toMatchObject({
        name: "EmbeddingError",
        code: "provider_error",
      });
      expect(impatient.stats.timeouts).toBe(1);
    } finally {
      await impatient.close();
    }
  });

  it("refuses calls once closed", async () => {
    const closing = new ShippedEmbedder();
    await closing.close();
    await closing.close();
    await expect(closing.embed(["late"])).rejects.toMatchObject({ code: "unavailable" });
  });
});
