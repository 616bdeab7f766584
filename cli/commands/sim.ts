import { parseArgs } from "node:util";
import { UsageError } from "../usage";

export const usage = `sim <fault|clear|faults|publish|rate|sources|stories|truth> [--url URL] [--json]
                                  drive a running newsroom simulator (npm run simulator) through
                                  its control API (default --url http://127.0.0.1:4100):
                                    sim fault SOURCE_ID 503 | 429 [RETRY_AFTER_S] | latency MS |
                                      blackhole | reset | malformed | no-validators | lying-etag |
                                      stall | quiet | stale-reads MS
                                    sim fault embeddings 429 [S] | 500 | 503 | latency MS |
                                      wrong-dims | malformed | blackhole | reset [--calls N]
                                      (the /v1/embeddings endpoint; --calls: the next N
                                      requests only)
                                    sim fault llm malformed | schema | 429 [S] | 500 | 503 |
                                      slow [MS] | blackhole | reset [--calls N]
                                      (the /v1/chat/completions endpoint: content that is not
                                      JSON, JSON against the extraction schema, or HTTP faults;
                                      slow: every answer MS later, default 5000)
                                    sim clear SOURCE_ID [KIND] | sim clear --all
                                    sim faults
                                    sim publish [--outlet ID] [--title T] [--category C]
                                      [--language en|bn] [--breaking] [--instrument X]…
                                      [--page-lead MS]
                                    sim rate [STORIES_PER_MINUTE]
                                    sim sources
                                    sim truth  (every item published so far per source, its
                                      story and how it was made; --json: the whole list)
                                    sim stories step [N] | expire-cursors | webhooks |
                                      webhook URL [SECRET] (deliver to URL; default: the
                                      secret sim sources lists) |
                                      late MIN_MS MAX_MS | duplicate SHARE | drop SHARE |
                                      clear-faults  (the story API, source story-desk; each
                                      webhook fault replaces the last)`;

const DEFAULT_URL = "http://127.0.0.1:4100";
// `slow` without a value: 5 s is slow enough to see on a latency chart and inside any client's
// usual timeout (wirewatch's chat provider waits 30 s), so it shows a slow supplier, not a dead one.
const DEFAULT_SLOW_MS = 5_000;
// The simulator answers at once on loopback; 5 s only separates "slow" from "not there at all".
const TIMEOUT_MS = 5_000;

interface Fault {
  kind: string;
  ms?: number;
  retryAfter?: number;
  calls?: number;
}

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      url: { type: "string", default: DEFAULT_URL },
      json: { type: "boolean", default: false },
      all: { type: "boolean", default: false },
      outlet: { type: "string" },
      title: { type: "string" },
      summary: { type: "string" },
      category: { type: "string" },
      language: { type: "string" },
      breaking: { type: "boolean" },
      instrument: { type: "string", multiple: true },
      "page-lead": { type: "string" },
      calls: { type: "string" },
    },
  });
  const [action, ...rest] = positionals;
  const base = parseBase(values.url);
  const print = (human: string, json: unknown) =>
    console.log(values.json ? JSON.stringify(json) : human);

  switch (action) {
    case "fault": {
      const [sourceId, kind, arg, ...extra] = rest;
      if (!sourceId || !kind || extra.length) {
        throw new UsageError("sim fault takes SOURCE_ID KIND [VALUE]");
      }
      const fault = faultBody(kind, arg);
      if (values.calls !== undefined) fault.calls = number("--calls", values.calls);
      const body = await call(base, "POST", `faults/${enc(sourceId)}`, fault);
      print(`${sourceId}: ${describeFault(body.fault as Fault)}`, body);
      return 0;
    }
    case "clear": {
      if (values.all) {
        if (rest.length) throw new UsageError("sim clear --all takes no source");
        print("cleared every fault", await call(base, "DELETE", "faults"));
        return 0;
      }
      const [sourceId, kind, ...extra] = rest;
      if (!sourceId || extra.length)
        throw new UsageError("sim clear takes SOURCE_ID [KIND] or --all");
      const query = kind ? `?kind=${enc(kind === "slow" ? "latency" : kind)}` : "";
      const body = await call(base, "DELETE", `faults/${enc(sourceId)}${query}`);
      print(`${sourceId}: cleared ${body.cleared} fault(s)`, body);
      return 0;
    }
    case "faults": {
      if (rest.length) throw new UsageError("sim faults takes no arguments");
      const body = await call(base, "GET", "faults");
      const rows = (body.faults as { sourceId: string; faults: Fault[] }[]).map(
        (f) => `${f.sourceId}: ${f.faults.map(describeFault).join(", ")}`,
      );
      print(rows.length ? rows.join("\n") : "no faults", body);
      return 0;
    }
    case "publish": {
      if (rest.length) throw new UsageError("sim publish takes options only (--title …)");
      const body = await call(base, "POST", "publish", publishBody(values));
      const story = body.story as { outlet: string; guid: string; title: string };
      print(`published at ${story.outlet}: ${story.title} (${story.guid})`, body);
      return 0;
    }
    case "rate": {
      const [perMinute, ...extra] = rest;
      if (extra.length) throw new UsageError("sim rate takes at most one number");
      const body =
        perMinute === undefined
          ? await call(base, "GET", "rate")
          : await call(base, "POST", "rate", { perMinute: number("rate", perMinute) });
      print(`${body.perMinute} stories per minute`, body);
      return 0;
    }
    case "sources": {
      const res = await request(base, "GET", "/sources");
      print(JSON.stringify(res, null, 2), res);
      return 0;
    }
    case "stories":
      return stories(base, rest, print);
    case "truth": {
      if (rest.length) throw new UsageError("sim truth takes no arguments");
      const body = await call(base, "GET", "truth");
      const { items, sharedStories, ...kinds } = body.counts as Record<string, number>;
      const parts = Object.entries(kinds).map(([k, n]) => `${k} ${n}`);
      print(
        `${items} items, ${sharedStories} stories told more than once: ${parts.join(", ")}`,
        body,
      );
      return 0;
    }
    default:
      throw new UsageError(
        action
          ? `sim has no action "${action}"`
          : "sim needs an action: fault, clear, faults, publish, rate, sources, stories or truth",
      );
  }
}

/** The story API's controls: changes now, cursor expiry, webhook endpoints and their faults. */
async function stories(
  base: string,
  args: string[],
  print: (human: string, json: unknown) => void,
): Promise<number> {
  const [what, a, b, ...extra] = args;
  if (extra.length) throw new UsageError("sim stories: too many arguments");
  const share = (raw: string | undefined) => {
    const value = number("share", raw ?? "");
    if (value > 1) throw new UsageError(`share is from 0 to 1, not ${value}`);
    return { share: value };
  };
  switch (what) {
    case "step": {
      const body = await call(base, "POST", "stories/step", {
        n: a === undefined ? 1 : number("N", a),
      });
      const events = body.events as { id: string; type: string; ticker: string }[];
      print(events.map((e) => `${e.id} ${e.type} ${e.ticker}`).join("\n") || "no events", body);
      return 0;
    }
    case "expire-cursors": {
      const body = await call(base, "POST", "stories/expire-cursors");
      print(`every cursor issued so far now answers 410 (epoch ${body.epoch})`, body);
      return 0;
    }
    case "webhook": {
      if (a === undefined) throw new UsageError("sim stories webhook URL [SECRET]");
      const body = await call(base, "POST", "stories/webhooks", {
        url: a,
        ...(b === undefined ? {} : { secrets: [b] }),
      });
      print(`delivering to ${a} as ${body.id}`, body);
      return 0;
    }
    case "webhooks": {
      const body = await call(base, "GET", "stories/webhooks");
      const rows = (body.webhooks as { id: string; url: string }[]).map(
        (w) => `${w.id} ${w.url} ${JSON.stringify(body.stats?.[w.id] ?? {})}`,
      );
      print(rows.length ? rows.join("\n") : "no webhook endpoints", body);
      return 0;
    }
    case "late":
      if (a === undefined || b === undefined)
        throw new UsageError("sim stories late MIN_MS MAX_MS");
      return faults(
        base,
        { late: { minMs: number("MIN_MS", a), maxMs: number("MAX_MS", b) } },
        print,
      );
    case "duplicate":
      return faults(base, { duplicate: share(a) }, print);
    case "drop":
      return faults(base, { drop: share(a) }, print);
    case "clear-faults": {
      const body = await call(base, "DELETE", "stories/webhook-faults");
      print("webhook faults cleared", body);
      return 0;
    }
    default:
      throw new UsageError(
        "sim stories takes step [N], expire-cursors, webhook URL, webhooks, late, duplicate, drop or clear-faults",
      );
  }
}

async function faults(base: string, body: unknown, print: (h: string, j: unknown) => void) {
  const answer = await call(base, "POST", "stories/webhook-faults", body);
  print(`webhook faults: ${JSON.stringify(answer.faults)}`, answer);
  return 0;
}

function faultBody(kind: string, arg: string | undefined): Fault {
  if (kind === "slow") {
    return { kind: "latency", ms: arg === undefined ? DEFAULT_SLOW_MS : number("slow", arg) };
  }
  if (kind === "latency" || kind === "stale-reads") {
    if (arg === undefined) throw new UsageError(`sim fault SOURCE_ID ${kind} needs milliseconds`);
    return { kind, ms: number(kind, arg) };
  }
  if (kind === "429") {
    return arg === undefined ? { kind } : { kind, retryAfter: number("Retry-After", arg) };
  }
  if (arg !== undefined) throw new UsageError(`fault "${kind}" takes no value`);
  return { kind };
}

function publishBody(values: Record<string, string | string[] | boolean | undefined>) {
  const language = values.language as string | undefined;
  if (language !== undefined && language !== "en" && language !== "bn") {
    throw new UsageError("--language is en or bn");
  }
  const lead = values["page-lead"] as string | undefined;
  return {
    outlet: values.outlet,
    title: values.title,
    summary: values.summary,
    category: values.category,
    language,
    breaking: values.breaking,
    instruments: values.instrument,
    pageLeadMs: lead === undefined ? undefined : number("page-lead", lead),
  };
}

function describeFault(f: Fault): string {
  const calls = f.calls === undefined ? "" : ` for the next ${f.calls} request(s)`;
  if (f.kind === "latency" || f.kind === "stale-reads") return `${f.kind} ${f.ms} ms${calls}`;
  if (f.kind === "429") return `429 (Retry-After ${f.retryAfter} s)${calls}`;
  return `${f.kind}${calls}`;
}

function number(name: string, raw: string): number {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value < 0) {
    throw new UsageError(`${name} must be a number ≥ 0, not "${raw}"`);
  }
  return value;
}

const enc = encodeURIComponent;

function parseBase(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url is not a URL: "${raw}"`);
  }
  if (!/^https?:$/.test(url.protocol)) throw new UsageError("--url must be http or https");
  return url.origin;
}

// biome-ignore lint/suspicious/noExplicitAny: control API answers are JSON read field by field
type Json = Record<string, any>;

function call(base: string, method: string, path: string, body?: unknown): Promise<Json> {
  return request(base, method, `/_control/${path}`, body);
}

async function request(base: string, method: string, path: string, body?: unknown): Promise<Json> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const e = err as Error & { cause?: NodeJS.ErrnoException };
    const why =
      e.name === "TimeoutError"
        ? `no answer within ${TIMEOUT_MS / 1000} s`
        : (e.cause?.code ?? e.cause?.message ?? e.message);
    throw new Error(
      `cannot reach the simulator at ${base} (${why}); start it with \`npm run simulator\` or pass --url`,
    );
  }
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    throw new Error(`${base} answered ${res.status} without JSON: is it the simulator?`);
  }
  if (!res.ok) {
    throw new Error(`simulator refused: ${json.error?.message ?? `HTTP ${res.status}`}`);
  }
  return json;
}
