import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { json } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { requeueDeadLetters } from "@/workers/queue/deadLetters";
import { badSelection, bodyFilter, SelectionBody } from "../filter";

export const dynamic = "force-dynamic";

const Body = SelectionBody.extend({ force: z.boolean().default(false) });

/**
 * POST /api/dead-letters/requeue { filter: {ids?, stage?, source?, code?, fingerprint?, from?,
 * to?}, all?, dryRun?, force?, cap? } → { dryRun, matched, requeued, ids, refused: {reason: n},
 * cap, capped, moreMatched, ratePerSecond, spreadSeconds, auditId }. Audited by the library.
 */
export async function POST(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, Body);
  if (!body.ok) return body.response;
  const { filter, all, dryRun, force, cap } = body.value;
  try {
    return json(
      await requeueDeadLetters(await getDb(), {
        actor: auth.actor,
        filter: bodyFilter(filter),
        all,
        dryRun,
        force,
        cap,
      }),
    );
  } catch (err) {
    return badSelection(err);
  }
}
