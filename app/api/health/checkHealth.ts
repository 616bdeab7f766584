import type { Database } from "@/lib/db";
import { getDb } from "@/lib/db";
import { type IngestionStatus, ingestionStatus, ingestionUnhealthy } from "@/lib/ingestionStatus";
import { checkDatabase } from "./checkDatabase";

export type HealthReport =
  | {
      ok: true;
      body: { status: "ok"; database: { kind: string }; ingestion: IngestionJson };
    }
  | {
      ok: false;
      body: {
        status: "unhealthy";
        error: { code: string; message: string };
        ingestion: IngestionJson;
      };
    };

type IngestionJson =
  | { mode: "elsewhere" }
  | { mode: "inline"; state: string; since: string; code: string | null; reason: string | null }
  | { mode: "unknown" };

/**
 * Readiness of this process: the database answers and, when this process runs ingestion, it
 * is running. Ingestion that runs elsewhere (WIREWATCH_WORKERS=off, or auto on PostgreSQL) is
 * not this process's health: each worker process stops with its reason when it cannot run.
 */
export async function checkHealth({
  open = getDb,
  ingestion = ingestionStatus(),
}: {
  open?: () => Promise<Database>;
  ingestion?: IngestionStatus | null;
} = {}): Promise<HealthReport> {
  const ingestionJson = toJson(ingestion);
  // A bad sources file is the first thing to fix and needs no database to say so.
  if (ingestion?.mode === "inline" && ingestion.state === "failed") {
    return unhealthy(ingestion.code ?? "ingestion_failed", ingestion.reason ?? "", ingestionJson);
  }
  const database = await checkDatabase(open);
  if (!database.ok) return unhealthy(database.code, database.message, ingestionJson);
  if (ingestion?.mode === "inline" && ingestionUnhealthy(ingestion)) {
    return unhealthy(
      `ingestion_${ingestion.state}`,
      ingestion.reason ?? `ingestion is ${ingestion.state.replaceAll("_", " ")}`,
      ingestionJson,
    );
  }
  return {
    ok: true,
    body: { status: "ok", database: { kind: database.kind }, ingestion: ingestionJson },
  };
}

function unhealthy(code: string, message: string, ingestion: IngestionJson): HealthReport {
  return { ok: false, body: { status: "unhealthy", error: { code, message }, ingestion } };
}

function toJson(s: IngestionStatus | null): IngestionJson {
  if (!s) return { mode: "unknown" };
  if (s.mode === "elsewhere") return { mode: "elsewhere" };
  return {
    mode: "inline",
    state: s.state,
    since: s.since.toISOString(),
    code: s.code,
    reason: s.reason,
  };
}
