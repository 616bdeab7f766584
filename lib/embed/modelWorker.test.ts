import { afterEach, describe, expect, it } from "vitest";
import { ModelWorker, type ModelWorkerOptions } from "./modelWorker";

/**
 * A small model in a real worker thread, speaking the host's protocol: a text's vector is
 * [its length, 1]. Texts steer it: "crash" ends the thread, "hang" never answers, "throw" fails
 * the job; workerData.loadFails makes the load fail, workerData.loadHangs makes it never end.
 * Each job is also reported (its texts) so a test sees how calls were batched.
 */
const TOY_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
if (workerData.loadFails) parentPort.postMessage({ type: "load_failed", message: "weights missing" });
else if (!workerData.loadHangs) parentPort.postMessage({ type: "ready", loadMs: 1 });
parentPort.on("message", (job) => {
  if (job.texts.includes("crash")) process.exit(7);
  if (job.texts.includes("hang")) return;
  if (job.texts.includes("throw")) {
    return parentPort.postMessage({ type: "failed", id: job.id, message: "bad text", code: "bad_input" });
  }
  const out = new Float32Array(job.texts.length * 2);
  job.texts.forEach((t, i) => { out[2 * i] = t.length; out[2 * i + 1] = 1; });
  parentPort.postMessage({ type: "done", id: job.id, vectors: out, batch: job.texts }, [out.buffer]);
});
`;

const workers: ModelWorker[] = [];
function toy(overrides: Partial<ModelWorkerOptions> = {}): ModelWorker {
  const w = new ModelWorker({
    name: "the toy model",
    source: TOY_SOURCE,
    workerData: {},
    dims: 2,
    batchSize: 4,
    loadTimeoutMs: 5_000,
    jobTimeoutMs: () => 5_000,
    ...overrides,
  });
  workers.push(w);
  return w;
}
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

const firsts = (vs: Float32Array[]) => vs.map((v) => v[0]);

describe("ModelWorker", () => {
  it("answers each call with its own vectors, in order, across chunks", async () => {
    const w = toy();
    const long = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]; // two chunks of 4 and 2
    expect(firsts(await w.embed(long))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(w.stats).toMatchObject({ starts: 1, jobs: 2, texts: 6 });
  });

  it("sends calls that wait together as one job, up to the batch size", async () => {
    const w = toy();
    await w.embed(["warm"]); // the worker is loaded and idle
    const calls = [["a"], ["bb", "cc"], ["ddd"], ["eeee"], ["f"]];
    const answers = await Promise.all(calls.map((texts) => w.embed(texts)));
    expect(answers.map(firsts)).toEqual([[1], [2, 2], [3], [4], [1]]);
    // The first goes alone (the worker was idle); the next three wait and fill one job of 4;
    // the last does not fit and goes next.
    expect(w.stats.jobs).toBe(1 + 3);
  });

  it("does not mix purposes in one job", async () => {
    const w = toy();
    await w.embed(["warm"]);
    await Promise.all([
      w.embed(["a"]),
      w.embed(["b"], "passage"),
      w.embed(["c"], "passage"),
      w.embed(["d"], "query"),
      w.embed(["e"], "passage"),
    ]);
    // warm; a alone (the worker was idle); b and c together; d; e.
    expect(w.stats.jobs).toBe(5);
  });

  it("fails the calls of a crashed worker and starts a new one for the next call", async () => {
    const w = toy();
    await expect(w.embed(["crash"])).rejects.toMatchObject({
      name: "EmbeddingError",
      code: "provider_error",
      message: expect.stringMatching(/toy model stopped: .*code 7/),
    });
    expect(firsts(await w.embed(["ok"]))).toEqual([2]);
    expect(w.stats).toMatchObject({ starts: 2, crashes: 1 });
  });

  it("never hangs: a job past its time fails, the worker is replaced", async () => {
    const w = toy({ jobTimeoutMs: () => 300 });
    const started = performance.now();
    await expect(w.embed(["hang"])).rejects.toMatchObject({
      code: "provider_error",
      message: expect.stringMatching(/no answer within 300 ms/),
    });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(firsts(await w.embed(["abc"]))).toEqual([3]);
    expect(w.stats).toMatchObject({ starts: 2, timeouts: 1 });
  });

  it("keeps calls queued behind a lost job and answers them from the new worker", async () => {
    const w = toy({ batchSize: 1 });
    await w.embed(["warm"]);
    const lost = w.embed(["crash"]);
    const behind = w.embed(["after"]);
    await expect(lost).rejects.toMatchObject({ code: "provider_error" });
    expect(firsts(await behind)).toEqual([5]);
  });

  it("passes the worker's own failure code through", async () => {
    const w = toy();
    await expect(w.embed(["throw"])).rejects.toMatchObject({ code: "bad_input" });
    expect(firsts(await w.embed(["x"]))).toEqual([1]);
  });

  it("fails every waiting call with 'unavailable' when the model cannot load, and tries again", async () => {
    const w = toy({ workerData: { loadFails: true } });
    const calls = [w.embed(["a"]), w.embed(["b"])];
    for (const call of calls) {
      await expect(call).rejects.toMatchObject({
        code: "unavailable",
        message: expect.stringMatching(/cannot load: weights missing/),
      });
    }
    await expect(w.embed(["c"])).rejects.toMatchObject({ code: "unavailable" });
    expect(w.stats.starts).toBe(2);
  });

  it("gives up on a load that never ends", async () => {
    const w = toy({ workerData: { loadHangs: true }, loadTimeoutMs: 300 });
    await expect(w.embed(["a"])).rejects.toMatchObject({
      code: "unavailable",
      message: expect.stringMatching(/did not load within 300 ms/),
    });
  });

  it("drops an aborted call without sending it", async () => {
    const w = toy({ batchSize: 1 });
    await w.embed(["warm"]);
    const first = w.embed(["first"]);
    const abort = new AbortController();
    const aborted = w.embed(["aborted"], undefined, abort.signal);
    abort.abort(new Error("caller gave up"));
    await expect(aborted).rejects.toThrow("caller gave up");
    await first;
    expect(w.stats.texts).toBe(2);
  });

  it("fails what waits on close, refuses calls after it, and closes twice", async () => {
    const w = toy({ workerData: { loadHangs: true } });
    const waiting = expect(w.embed(["a"])).rejects.toMatchObject({ code: "unavailable" });
    await w.close();
    await waiting;
    await expect(w.embed(["b"])).rejects.toMatchObject({ code: "unavailable" });
    await w.close();
  });
});
