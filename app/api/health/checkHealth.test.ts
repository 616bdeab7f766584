import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db";
import { resetIngestionStatus } from "@/lib/ingestionStatus";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Supervisor, superviseIngestion } from "@/workers/superviseIngestion";
import { checkHealth } from "./checkHealth";

// Settings are read once per process: the sources file is named before anything reads them,
// and each test writes (or removes) it.
const dir = mkdtempSync(path.join(tmpdir(), "wirewatch-health-"));
const sourcesFile = path.join(dir, "sources.json");
process.env.WIREWATCH_CONFIG = sourcesFile;
process.env.WIREWATCH_SIMULATOR = "off";

let db: TestDatabase;
let supervisor: Supervisor | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  await supervisor?.stop();
  supervisor = undefined;
  resetIngestionStatus();
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function startInline() {
  supervisor = superviseIngestion({ open: async () => db, inline: true });
  await supervisor.ready;
  return checkHealth({ open: async () => db });
}

describe("health", () => {
  it("is not ok, with the file and the bad field, when the sources file is invalid", async () => {
    writeFileSync(sourcesFile, JSON.stringify({ sources: [{ id: "x", kind: "feed" }] }));
    const report = await startInline();
    expect(report.ok).toBe(false);
    expect(report.body).toMatchObject({
      status: "unhealthy",
      error: { code: "sources_file_invalid" },
      ingestion: { mode: "inline", state: "failed" },
    });
    const message = (report.body as { error: { message: string } }).error.message;
    expect(message).toContain(sourcesFile);
    expect(message).toMatch(/sources\[0\]\.url/);
  });

  it("is not ok when the sources file is not JSON", async () => {
    writeFileSync(sourcesFile, "{ sources: ");
    const report = await startInline();
    expect(report.body).toMatchObject({ error: { code: "sources_file_invalid" } });
    expect(JSON.stringify(report.body)).toMatch(/not JSON/);
  });

  it("is not ok when the named sources file does not exist", async () => {
    rmSync(sourcesFile, { force: true });
    const report = await startInline();
    expect(report.ok).toBe(false);
    expect(report.body).toMatchObject({ error: { code: "sources_file_missing" } });
    expect(JSON.stringify(report.body)).toContain(sourcesFile);
  });

  it("is ok while ingestion runs, and not ok once it stopped", async () => {
    writeFileSync(sourcesFile, JSON.stringify({ sources: [] }));
    const running = await startInline();
    expect(running).toMatchObject({
      ok: true,
      body: { status: "ok", ingestion: { mode: "inline", state: "running" } },
    });
    await supervisor?.stop();
    const stopped = await checkHealth({ open: async () => db });
    expect(stopped.ok).toBe(false);
    expect(stopped.body).toMatchObject({
      error: { code: "ingestion_stopped" },
      ingestion: { state: "stopped" },
    });
  });

  it("is ok when ingestion runs elsewhere (workers off): the web app's health is its own", async () => {
    supervisor = superviseIngestion({ open: async () => db, inline: false });
    await supervisor.ready;
    const report = await checkHealth({ open: async () => db });
    expect(report).toMatchObject({ ok: true, body: { ingestion: { mode: "elsewhere" } } });
  });

  it("names no database host, port or name, and no driver text", async () => {
    const ok = await checkHealth({ open: async () => db, ingestion: null });
    expect(ok.ok).toBe(true);
    expect(Object.keys((ok.body as { database: object }).database)).toEqual(["kind"]);

    const down = await checkHealth({
      open: () => openDatabase({ url: "postgresql://postgres@127.0.0.1:1/wirewatch_secret_db" }),
      ingestion: null,
    });
    expect(down.ok).toBe(false);
    expect(down.body).toMatchObject({
      error: { code: "database_unavailable", message: "the database is not reachable" },
    });
    const text = JSON.stringify(down.body);
    for (const leak of ["127.0.0.1", "wirewatch_secret_db", ":1", "ECONNREFUSED", "connect"]) {
      expect(text).not.toContain(leak);
    }
  });
});
