import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { Prisma } from "@/lib/generated/prisma/client";

/** One look at a page source (workers/refreshPage.ts): how it was read, its cost, what it found. */
export interface PageLook {
  mode: "http" | "browser";
  code: string;
  wallMs: number;
  cpuMs: number;
  requests: number;
  blocked: number;
  blockedDetail: { url: string; reason: string }[];
  bytes: number;
  headlines: number;
  message?: string;
}

/** Writes the look to page_looks (the source page reads them) and tells the metrics. */
export async function recordPageLook(
  db: Database,
  sourceId: string,
  collector: string,
  look: PageLook,
): Promise<void> {
  await db.prisma.pageLook.create({
    data: {
      sourceId,
      collector,
      mode: look.mode,
      code: look.code,
      wallMs: Math.max(0, Math.round(look.wallMs)),
      cpuMs: Math.max(0, Math.round(look.cpuMs)),
      requests: look.requests,
      blocked: look.blocked,
      blockedDetail: look.blockedDetail.length > 0 ? look.blockedDetail : Prisma.DbNull,
      bytes: look.bytes,
      headlines: look.headlines,
      message: look.message?.slice(0, 1000) ?? null,
    },
  });
  emit("page:looked", {
    source: sourceId,
    mode: look.mode,
    cpuSeconds: look.cpuMs / 1000,
    blocked: look.blocked,
  });
}
