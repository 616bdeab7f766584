import { describe, expect, it } from "vitest";
import { z } from "zod";
import { readBodyBytes, readJsonBody } from "./body";

/** A body of `total` bytes in 64 KiB chunks that counts how much of it was pulled. */
function counted(total: number) {
  const state = { pulled: 0 };
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= total) return controller.close();
      state.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, state };
}

function post(body: BodyInit | null, headers: Record<string, string> = {}): Request {
  return new Request("http://localhost:3000/api/x", {
    method: "POST",
    headers: { host: "localhost:3000", "content-type": "application/json", ...headers },
    body,
    duplex: "half",
  } as RequestInit);
}

const Schema = z.strictObject({ dryRun: z.boolean() });

describe("readBodyBytes", () => {
  it("refuses a declared Content-Length over the cap before reading a byte", async () => {
    const { stream, state } = counted(10 * 1024 * 1024);
    const res = await readBodyBytes(post(stream, { "content-length": "10485760" }), {
      limit: 4096,
    });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.response.status).toBe(413);
    expect(await res.response.json()).toMatchObject({ error: { code: "too_large" } });
    expect(state.pulled).toBeLessThanOrEqual(64 * 1024);
  });

  it("stops a chunked body at the cap: 200 MB costs one chunk past it", async () => {
    const { stream, state } = counted(200 * 1024 * 1024);
    const res = await readBodyBytes(post(stream), { limit: 1024 * 1024 });
    expect(res.ok ? 200 : res.response.status).toBe(413);
    expect(state.pulled).toBeLessThanOrEqual(1024 * 1024 + 2 * 64 * 1024);
  });

  it("reads a body up to the cap whole", async () => {
    const res = await readBodyBytes(post("x".repeat(4096)), { limit: 4096 });
    expect(res.ok && res.value.length).toBe(4096);
    const empty = await readBodyBytes(post(null), { limit: 4096 });
    expect(empty.ok && empty.value.length).toBe(0);
  });

  it("refuses a foreign Host (the proxy does not run for requests with a body)", async () => {
    const res = await readBodyBytes(post("{}", { host: "evil.example" }), { limit: 4096 });
    expect(res.ok ? 200 : res.response.status).toBe(421);
  });
});

describe("readJsonBody", () => {
  it("parses with the schema, and says 400 for what is not UTF-8 JSON or not the schema", async () => {
    expect(await readJsonBody(post('{"dryRun":true}'), Schema)).toEqual({
      ok: true,
      value: { dryRun: true },
    });
    const bad = [
      post("not json"),
      post(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])),
      post('{"dryRun":"yes"}'),
      post('{"dryRun":true,"extra":1}'),
      post(null),
    ];
    for (const request of bad) {
      const res = await readJsonBody(request, Schema);
      expect(res.ok ? 200 : res.response.status).toBe(400);
    }
    const res = await readJsonBody(post('{"dryRun":"yes"}'), Schema);
    expect(res.ok ? "" : (await res.response.json()).error.message).toMatch(/^dryRun: /);
  });

  it("caps at 1 MiB unless told otherwise", async () => {
    const big = JSON.stringify({ dryRun: true, pad: "x".repeat(1024 * 1024) });
    const res = await readJsonBody(post(big), Schema);
    expect(res.ok ? 200 : res.response.status).toBe(413);
  });
});

describe("every route", () => {
  it("reads its body through readBodyBytes (so through its cap)", async () => {
    const { readdir, readFile } = await import("node:fs/promises");
    const path = await import("node:path");
    const root = path.resolve(import.meta.dirname, "../..");
    const offenders: string[] = [];
    for (const dir of ["app", "lib"]) {
      for (const file of await readdir(path.join(root, dir), { recursive: true })) {
        if (!/\.tsx?$/.test(file) || /\.test\.tsx?$/.test(file)) continue;
        const relative = path.join(dir, file);
        if (relative === path.join("lib", "api", "body.ts")) continue;
        const source = await readFile(path.join(root, relative), "utf8");
        if (/\brequest\.(json|text|arrayBuffer|formData|blob)\(|\brequest\.body\b/.test(source)) {
          offenders.push(relative);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
