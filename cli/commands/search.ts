import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import { when } from "@/lib/dashboard/format";
import { openConfiguredDatabase } from "@/lib/db";
import { MAX_LIMIT, MAX_QUERY_CHARS, SearchInputError } from "@/lib/search/hybrid";
import { closeQueryEmbedders, queryEmbedderFor } from "@/lib/search/queryEmbedders";
import { reasonLabels } from "@/lib/search/reasons";
import { type SearchAnswer, search } from "@/lib/search/search";
import { textProblem } from "@/lib/validation";
import { UsageError } from "../usage";

export const usage = `search "QUERY" [--lang en|bn] [--source ID] [--since ISO] [--until ISO]
         [--limit N] [--cursor C] [--json]
                                  hybrid search of the stored stories (full text and meaning, one
                                  hit per story with its outlets and why it matched); --json prints
                                  the answer of GET /api/search as one line`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      lang: { type: "string" },
      source: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      limit: { type: "string", default: "10" },
      cursor: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  if (positionals.length !== 1) {
    throw new UsageError('search takes one query (quote it: search "port strike")');
  }
  const q = (positionals[0] as string).trim();
  if (q === "" || q.length > MAX_QUERY_CHARS || textProblem(q)) {
    throw new UsageError(
      `the query must be 1 to ${MAX_QUERY_CHARS} characters${textProblem(q) ? `: it ${textProblem(q)}` : ""}`,
    );
  }
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new UsageError(`--limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  if (values.lang !== undefined && !/^[A-Za-z]{2,3}$/.test(values.lang)) {
    throw new UsageError("--lang must be a language code such as en or bn");
  }
  const instant = (name: string, raw: string | undefined) => {
    if (raw === undefined) return undefined;
    const d = new Date(raw);
    if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(d.getTime())) {
      throw new UsageError(`--${name} must be an ISO date or time, such as 2026-12-01T10:00:00Z`);
    }
    return d;
  };
  const filters = {
    lang: values.lang?.toLowerCase(),
    sourceId: values.source,
    since: instant("since", values.since),
    until: instant("until", values.until),
  };

  // Only reads (the pgvector extension aside): a directory with no database must say so.
  const db = await openConfiguredDatabase({ mustExist: true });
  try {
    const answer = await search(
      db,
      { q, filters, limit, cursor: values.cursor },
      {
        configuredModel: config().WIREWATCH_SEARCH_MODEL,
        embedderFor: (model) => queryEmbedderFor(model, db),
      },
    );
    if (values.json) console.log(JSON.stringify(answer));
    else console.log(humanLines(answer).join("\n"));
    return 0;
  } catch (err) {
    if (err instanceof SearchInputError) throw new UsageError(err.message);
    throw err;
  } finally {
    await closeQueryEmbedders();
    await db.close();
  }
}

/** The answer for a terminal: what was searched with, then each hit with its outlets and why. */
export function humanLines(answer: SearchAnswer): string[] {
  const model = answer.model
    ? `${answer.model.kind === "meaning" ? "meaning" : "lexical vectors"}: ${answer.model.id}`
    : "keyword only";
  const backend =
    answer.vectorBackend === "pgvector"
      ? `pgvector ${answer.pgvectorVersion ?? ""}`.trim()
      : "portable vectors";
  const lines = [
    `${answer.mode} search (${model}; ${backend}): ${answer.hits.length} ${
      answer.hits.length === 1 ? "story" : "stories"
    } in ${Math.round(answer.timings.totalMs)} ms`,
    ...answer.notices.map((n) => `note: ${n.message}`),
  ];
  answer.hits.forEach((hit, i) => {
    const outlets = hit.outlets.map((o) => o.name ?? o.sourceId).join(", ");
    lines.push(
      "",
      `${String(i + 1).padStart(2)}. ${hit.title ?? "(no title)"}`,
      `    ${hit.sourceName ?? hit.sourceId} · ${when(hit.publishedAt ?? hit.firstSeenAt)}` +
        (hit.members > 1 ? ` · ${hit.members} items from ${outlets}` : ""),
      `    why: ${reasonLabels(hit.reasons).join("; ")}`,
      `    ${hit.link ?? `/items/${hit.entryKey}`}`,
    );
  });
  if (answer.hits.length === 0) lines.push("", "no stories match");
  if (answer.nextCursor) lines.push("", `more: --cursor ${answer.nextCursor}`);
  return lines;
}
