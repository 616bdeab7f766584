import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { type Database, openConfiguredDatabase } from "@/lib/db";
import {
  type DeadLetterFilterInput,
  deadLetterStats,
  discardDeadLetters,
  getDeadLetter,
  InvalidDeadLetterFilterError,
  listDeadLetters,
  MAX_CAP,
  parseDeadLetterFilter,
  requeueDeadLetters,
  SelectionError,
} from "@/workers/queue/deadLetters";
import { UsageError } from "../usage";

export const usage = `dlq list [FILTERS] [--json]     dead letters, newest first (--limit N a page, --cursor ID)
  dlq stats [FILTERS] [--json]    depth and oldest age by stage; groups by fingerprint
  dlq show ID [--json]            one dead letter with its failures and lease events
  dlq requeue FILTERS|--all       put them back on their queue, spread out at --rate N a second
        [--dry-run] [--force]     (default 10), at most --limit N (default 10000); refuses open
        [--rate N] [--limit N]    breakers unless --force; audited as --actor NAME (default the
        [--actor NAME] [--json]   OS user)
  dlq discard FILTERS|--all       archive them (kept, out of the dead-letter views), audited
        [--dry-run] [--limit N] [--actor NAME] [--json]
                                  FILTERS: --stage Q --source ID --code C --fingerprint F
                                  --since T --until T (ISO time, or an age: 30m, 6h, 2d) --id ID…`;

const SUBCOMMANDS = ["list", "show", "stats", "requeue", "discard"] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

/** An ISO time, or an age before now: 90s, 30m, 6h, 2d. */
function parseWhen(flag: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const age = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(value.trim());
  if (age) {
    const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 }[age[2] as "s" | "m" | "h" | "d"];
    return new Date(Date.now() - Number(age[1]) * unit);
  }
  const d = new Date(value);
  if (Number.isNaN(d.getTime()) || value.trim() === "") {
    throw new UsageError(`${flag} must be an ISO time or an age like 30m, 6h, 2d (got "${value}")`);
  }
  return d;
}

function parseInteger(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be an integer from ${min} to ${max} (got "${value}")`);
  }
  return n;
}

const json = (v: unknown) =>
  JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x));

const oneLine = (s: string | undefined | null, max = 100) => {
  const line = (s ?? "").replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

const ago = (seconds: number | null) => {
  if (seconds === null) return "-";
  if (seconds < 120) return `${Math.round(seconds)}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
};

export async function run(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // node:util parseArgs: unknown option, missing value…
    throw new UsageError(`dlq: ${(err as Error).message}`);
  }
  const { values, positionals } = parsed;
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new UsageError(`dlq needs one of ${SUBCOMMANDS.join(", ")}`);
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) {
    throw new UsageError(`dlq: unknown subcommand "${sub}" (one of ${SUBCOMMANDS.join(", ")})`);
  }
  const cmd = sub as Subcommand;
  const only = (flag: keyof typeof values, allowed: Subcommand[]) => {
    const v = values[flag];
    const given = Array.isArray(v) ? v.length > 0 : v !== undefined && v !== false;
    if (given && !allowed.includes(cmd)) {
      throw new UsageError(`dlq ${cmd}: --${flag} is for ${allowed.join(" and ")} only`);
    }
  };
  only("dry-run", ["requeue", "discard"]);
  only("all", ["requeue", "discard"]);
  only("force", ["requeue"]);
  only("rate", ["requeue"]);
  only("cursor", ["list"]);
  only("limit", ["list", "requeue", "discard"]);

  if (cmd === "show") {
    const ids = [...rest, ...(values.id ?? [])];
    if (ids.length !== 1) throw new UsageError("dlq show needs exactly one id");
    const id = ids[0] as string;
    if (!/^[1-9]\d{0,18}$/.test(id)) throw new UsageError(`dlq show: bad id "${id}"`);
    return withDb(
      async (db) => {
        const d = await getDeadLetter(db, id);
        if (!d) {
          console.error(`dlq: no dead letter ${id}`);
          return 1;
        }
        if (values.json) {
          console.log(json(d));
          return 0;
        }
        console.log(`dead letter ${d.id} (${d.state}) in ${d.stage}, key ${d.key ?? "-"}`);
        console.log(`  source ${d.sourceId ?? "-"}; attempts ${d.attempts}/${d.maxAttempts}`);
        console.log(`  requeued ${d.requeues}×; fingerprint ${d.fingerprint ?? "-"}`);
        console.log(`  first failed ${d.firstFailedAt?.toISOString() ?? "-"}`);
        console.log(`  dead since ${d.deadAt?.toISOString() ?? "-"} (${ago(d.deadForSeconds)})`);
        console.log(`  payload ${json(d.payload)}`);
        const e = d.lastError;
        console.log(`  last error ${e?.code ?? "-"}: ${e?.message ?? "-"}`);
        if (e?.host) console.log(`  host ${e.host}`);
        // The extract stage's attempts: each provider's outcome, error and raw answer.
        if (e?.detail !== undefined) console.log(`  detail ${json(e.detail)}`);
        if (e?.stack) console.log(e.stack.replace(/^/gm, "    "));
        console.log(`  failures (${d.failures.length}):`);
        for (const f of d.failures) {
          console.log(
            `    ${f.failedAt.toISOString()}  attempt ${f.attempt}  ${f.kind}  ${f.workerId ?? "-"}  ${f.error.code}: ${oneLine(f.error.message)}`,
          );
        }
        console.log(`  lease events (${d.leaseEvents.length}):`);
        for (const l of d.leaseEvents) {
          console.log(
            `    ${l.at.toISOString()}  attempt ${l.attempt}  ${l.kind}  ${l.workerId ?? "-"}`,
          );
        }
        return 0;
      },
      { read: true },
    );
  }
  if (rest.length > 0) throw new UsageError(`dlq ${cmd}: unexpected "${rest.join(" ")}"`);

  const filterInput: DeadLetterFilterInput = {
    ids: values.id && values.id.length > 0 ? values.id : undefined,
    queue: values.stage,
    sourceId: values.source,
    code: values.code,
    fingerprint: values.fingerprint,
    from: parseWhen("--since", values.since),
    to: parseWhen("--until", values.until),
  };
  try {
    parseDeadLetterFilter(filterInput);
  } catch (err) {
    if (err instanceof InvalidDeadLetterFilterError) {
      throw new UsageError(`dlq ${cmd}: ${err.message.replace(/\bqueue:/, "--stage:")}`);
    }
    throw err;
  }
  const hasFilter = Object.values(filterInput).some((v) => v !== undefined);

  if (cmd === "list") {
    const limit = values.limit === undefined ? 50 : parseInteger("--limit", values.limit, 1, 500);
    const cursor = values.cursor;
    if (cursor !== undefined && !/^[1-9]\d{0,18}$/.test(cursor)) {
      throw new UsageError(`--cursor must be a dead letter id (got "${cursor}")`);
    }
    return withDb(
      async (db) => {
        const page = await listDeadLetters(db, filterInput, { limit, cursor });
        if (values.json) {
          console.log(json(page));
          return 0;
        }
        for (const d of page.items) {
          console.log(
            [
              d.id,
              d.stage,
              d.sourceId ?? "-",
              d.fingerprint ?? "-",
              `${d.attempts}/${d.maxAttempts}`,
              `dead ${ago(d.deadForSeconds)}`,
              d.requeues > 0 ? `requeued ${d.requeues}×` : "",
              `${d.lastError?.code ?? "-"}: ${oneLine(d.lastError?.message, 80)}`,
            ]
              .filter(Boolean)
              .join("  "),
          );
        }
        console.log(
          `${page.items.length} dead letter(s)` +
            (page.nextCursor ? `; more with --cursor ${page.nextCursor}` : ""),
        );
        return 0;
      },
      { read: true },
    );
  }

  if (cmd === "stats") {
    return withDb(
      async (db) => {
        const s = await deadLetterStats(db, filterInput);
        if (values.json) {
          console.log(json(s));
          return 0;
        }
        console.log(`dead letters: ${s.depth}, oldest ${ago(s.oldestAgeSeconds)}`);
        for (const st of s.byStage) {
          console.log(`  ${st.stage}: ${st.depth}, oldest ${ago(st.oldestAgeSeconds)}`);
        }
        if (s.groups.length > 0) console.log("by cause:");
        for (const g of s.groups) {
          console.log(
            `  ${g.fingerprint ?? "-"}  ${g.count}×  ${g.stage}  ${g.code ?? "-"}: ${oneLine(g.sampleMessage, 80)}` +
              `  (${g.firstSeen?.toISOString() ?? "-"} … ${g.lastSeen?.toISOString() ?? "-"})`,
          );
        }
        return 0;
      },
      { read: true },
    );
  }

  // requeue | discard
  if (!hasFilter && !values.all) {
    throw new UsageError(
      `dlq ${cmd} needs a filter or --id; pass --all to ${cmd} every dead letter`,
    );
  }
  const cap =
    values.limit === undefined ? undefined : parseInteger("--limit", values.limit, 1, MAX_CAP);
  const ratePerSecond = values.rate === undefined ? undefined : Number(values.rate);
  if (
    ratePerSecond !== undefined &&
    (!/^\d+(\.\d+)?$/.test(values.rate ?? "") || !(ratePerSecond > 0) || ratePerSecond > 100_000)
  ) {
    throw new UsageError(
      `--rate must be a number of jobs per second above 0 (got "${values.rate}")`,
    );
  }
  const actor = values.actor.trim();
  if (actor === "") throw new UsageError("--actor must not be empty");
  const common = {
    actor,
    filter: filterInput,
    all: values.all,
    cap,
    dryRun: values["dry-run"],
  };
  return withDb(
    async (db) => {
      try {
        if (cmd === "requeue") {
          const r = await requeueDeadLetters(db, { ...common, force: values.force, ratePerSecond });
          if (values.json) {
            console.log(json(r));
            return 0;
          }
          const refused = Object.entries(r.refused).map(([why, n]) => `${n} ${why}`);
          console.log(
            `requeue (${r.dryRun ? "dry run" : "done"}): matched ${r.matched}, ` +
              `${r.dryRun ? "would requeue" : "requeued"} ${r.requeued}` +
              (r.requeued > 1
                ? ` over ${r.spreadSeconds.toFixed(1)} s at ${r.ratePerSecond}/s`
                : "") +
              (r.superseded > 0
                ? `; ${r.dryRun ? "would resolve" : "resolved"} ${r.superseded} (${Object.entries(
                    r.supersededBy,
                  )
                    .slice(0, 5)
                    .map(([dead, live]) => `${dead} superseded by job ${live}`)
                    .join(", ")})`
                : "") +
              (refused.length > 0 ? `; refused: ${refused.join(", ")}` : "") +
              (r.refused["breaker open"] ? " (--force to requeue anyway)" : "") +
              (r.moreMatched ? `; ${r.capped} more over the cap of ${r.cap} (run again)` : "") +
              `; audit #${r.auditId}`,
          );
          return 0;
        }
        const r = await discardDeadLetters(db, common);
        if (values.json) {
          console.log(json(r));
          return 0;
        }
        console.log(
          `discard (${r.dryRun ? "dry run" : "done"}): matched ${r.matched}, ` +
            `${r.dryRun ? "would archive" : "archived"} ${r.discarded}` +
            (r.moreMatched ? `; ${r.capped} more over the cap of ${r.cap} (run again)` : "") +
            `; audit #${r.auditId}`,
        );
        return 0;
      } catch (err) {
        if (err instanceof SelectionError) throw new UsageError(err.message);
        throw err;
      }
    },
    { read: values["dry-run"] },
  );
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      stage: { type: "string" },
      source: { type: "string" },
      code: { type: "string" },
      fingerprint: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      id: { type: "string", multiple: true },
      "dry-run": { type: "boolean", default: false },
      force: { type: "boolean", default: false },
      all: { type: "boolean", default: false },
      rate: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      json: { type: "boolean", default: false },
      actor: { type: "string", default: `cli:${userInfo().username}` },
    },
  });
}

/** `read`: the command only reads (list, show, stats, a dry run), so it must not create one. */
async function withDb(fn: (db: Database) => Promise<number>, { read }: { read: boolean }) {
  const db = await openConfiguredDatabase({ mustExist: read });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}
