// Every route under app/api, found on disk (a new route is covered without touching this file),
// called with every method it exports and with hostile parameters, paths, bodies, cookies and
// content types, anonymously and as the admin: no answer is a 5xx (or a throw, which Next turns
// into one), and every 4xx carries the route's error shape. The database is up all along, so
// a 503 "database unavailable" is a failure too.
import { readdirSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAdminState, SESSION_COOKIE, sealSession } from "@/lib/auth/session";
import type { Database } from "@/lib/db";
import { ReadModel } from "@/lib/readmodel/serve";
import { openReadModelStore } from "@/lib/readmodel/store";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { seedReadModel } from "@/lib/testing/readModelSeed";
import { makeDeadLetters } from "@/workers/queue/deadLetters/testing";

const PASSWORD = "fuzz-admin-password";
process.env.ADMIN_PASSWORD = PASSWORD;
process.env.WIREWATCH_CHAOS = "on";
process.env.DASHBOARD_READ = "open";

const ORIGIN = "http://localhost:3000";
const readModelGlobal = globalThis as unknown as { wirewatchReadModel?: ReadModel };
/** Each sweep makes a few thousand calls: about 35 s for the longest on PGlite on 2 busy cores. */
const FUZZ_TIMEOUT = 300_000;
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => unknown;

interface Route {
  /** "/api/sources/[id]/pause" */
  template: string;
  /** The dynamic segments' names, in order. */
  params: string[];
  handlers: [string, Handler][];
}

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return routeFiles(full);
    return e.name === "route.ts" ? [full] : [];
  });
}

const API_DIR = path.resolve(import.meta.dirname);

async function loadRoutes(): Promise<Route[]> {
  const routes: Route[] = [];
  for (const file of routeFiles(API_DIR).sort()) {
    const rel = path.relative(API_DIR, path.dirname(file)).split(path.sep).join("/");
    const template = `/api/${rel}`;
    const params = [...template.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1] as string);
    const mod = (await import(file)) as Record<string, unknown>;
    const handlers = METHODS.filter((m) => typeof mod[m] === "function").map(
      (m) => [m, mod[m] as Handler] as [string, Handler],
    );
    routes.push({ template, params, handlers });
  }
  return routes;
}

// --- what is thrown at them ------------------------------------------------------------------

const INT64_PLUS_ONE = "9223372036854775808";
/** An items cursor: base64url JSON [updated_at as PostgreSQL prints it, entry key]. */
const cursorOf = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const JAN_1 = "2026-01-01 00:00:00+00";
const FEB_30 = "2026-02-30 00:00:00+00";
/** Raw (already percent-encoded) query values: the bytes go on the URL as they are. */
const RAW_VALUES = [
  "%00",
  "a%00b",
  "%ED%A0%80",
  "%E0%A4%A",
  "%FF%FE",
  "%C0%80",
  "%",
  INT64_PLUS_ONE,
  "9999999999999999999",
  "99999999999999999999999",
  "-1",
  "0",
  "1.5",
  "0x10",
  "1e3",
  "NaN",
  "Infinity",
  "",
  "%20",
  "x".repeat(5000),
  "%27%3B--",
  "%5B%222026%22%2C%22x%22%5D",
  cursorOf(["2026", "x"]),
  cursorOf([JAN_1, 1]),
  cursorOf([FEB_30, "a".repeat(64)]),
  cursorOf([JAN_1, "\u0000"]),
  cursorOf([JAN_1, "\uD800"]),
  cursorOf(["99999-01-01 00:00:00+00", "a".repeat(64)]),
  cursorOf(["2026-01-01 25:61:00+00", "a".repeat(64)]),
  cursorOf([1, 2]),
  cursorOf({}),
  "!!!notbase64!!!",
  "1999-12-31",
  "2026-13-45T99:99:99Z",
  "fetch",
];
/** Parameter names any route reads, plus one none does. */
const PARAM_NAMES = [
  "q",
  "source",
  "stage",
  "code",
  "fingerprint",
  "from",
  "to",
  "cursor",
  "limit",
  "action",
  "before",
  "after",
  "hours",
  "sort",
  "dir",
  "kind",
  "health",
  "breaker",
  "lang",
  "since",
  "until",
  "unknown",
];
/** Path parameter values, as Next.js hands them over (decoded), and a few still encoded. */
const PATH_VALUES = [
  "\u0000",
  "a\u0000",
  "\uD800",
  "\uDFFFx",
  "%ED%A0%80",
  "%E0%A4%A",
  "%00",
  INT64_PLUS_ONE,
  "9999999999999999999",
  "-1",
  "0",
  "1.5",
  "0x10",
  "1e3",
  "",
  " ",
  "x".repeat(5000),
  "../../etc/passwd",
  "a".repeat(64),
  "1",
];
/** Values for body fields: every JSON type, and strings PostgreSQL refuses. */
const BODY_VALUES: unknown[] = [
  "\u0000",
  "a\u0000b",
  "\uD800",
  "\uDC00x",
  "x".repeat(100_000),
  INT64_PLUS_ONE,
  "9999999999999999999",
  2 ** 63,
  1e300,
  -1,
  0,
  1.5,
  "0x10",
  "",
  null,
  true,
  [],
  ["\u0000"],
  [INT64_PLUS_ONE],
  ["1", "1"],
  {},
  { stage: "\u0000" },
  "2026-02-30",
  "not a date",
];
const BODY_FIELDS = [
  "filter",
  "ids",
  "stage",
  "source",
  "code",
  "fingerprint",
  "from",
  "to",
  "all",
  "dryRun",
  "force",
  "cap",
  "action",
  "sourceId",
  "permanent",
  "probes",
  "password",
];
const FILTER_FIELDS = ["ids", "stage", "source", "code", "fingerprint", "from", "to"];
/** Whole bodies, as text. */
const RAW_BODIES = [
  "",
  "not json",
  "{",
  "null",
  "[]",
  '"x"',
  "1",
  '{"filter":[]}',
  '{"filter":"all"}',
  '{"action":["set"]}',
  '{"action":"set","stage":"fetch","sourceId":"\\u0000"}',
  '{"action":"set","stage":"fetch","sourceId":"\\ud800"}',
  '{"action":"clear","sourceId":"\\u0000"}',
  '{"filter":{"stage":"\\u0000"}}',
  '{"filter":{"source":"\\ud800"}}',
  '{"filter":{"code":"a\\u0000"}}',
  `{"filter":{"ids":["${INT64_PLUS_ONE}"]}}`,
  '{"filter":{"ids":[-1]}}',
  '{"filter":{"ids":[1.5]}}',
  '{"filter":{"ids":["0x10"]}}',
  '{"filter":{"from":"2026-02-30"}}',
  '{"filter":{"stage":"fetch"},"dryRun":true,"cap":1e300}',
  '{"password":"\\u0000"}',
  '{"password":"\\ud800"}',
  '{"dryRun":"\\u0000"}',
  '{"__proto__":{"all":true},"filter":{}}',
];
const CONTENT_TYPES = [
  "application/json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "",
];
const COOKIES = [
  `${SESSION_COOKIE}=%E0%A4%A`,
  `${SESSION_COOKIE}=%ED%A0%80`,
  `${SESSION_COOKIE}=%`,
  `${SESSION_COOKIE}=garbage`,
  `${SESSION_COOKIE}=Fe26.2**x*y*z`,
  `${SESSION_COOKIE}`,
  `=${SESSION_COOKIE}`,
  "a=%E0%A4%A; b=%ED%A0%80",
];

/** Text with what PostgreSQL refuses mixed in: NUL and lone surrogates. */
const hostileText = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.constantFrom("\u0000", "\uD800", "\uDBFF", "\uDC00", "\uDFFF") },
  ),
  maxLength: 40,
});
const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    hostileText,
    fc.constantFrom(...BODY_VALUES),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...FILTER_FIELDS, ...BODY_FIELDS), tie("value"), {
      maxKeys: 4,
    }),
  ),
})).value;

// --- calling them ------------------------------------------------------------------------------

let db: TestDatabase;
let routes: Route[];
let adminCookie = "";
const failures: string[] = [];
let calls = 0;

async function refreshAdminCookie(): Promise<void> {
  const state = await loadAdminState(db, PASSWORD);
  adminCookie = `${SESSION_COOKIE}=${encodeURIComponent(await sealSession(state))}`;
}

interface Call {
  route: Route;
  method: string;
  handler: Handler;
  /** Path parameter values (defaults fill the rest). */
  params?: Record<string, string>;
  /** Raw query string without "?". */
  query?: string;
  body?: string;
  contentType?: string;
  cookie?: string;
  admin: boolean;
}

function concretePath(route: Route, params: Record<string, string>): string {
  return route.template.replace(/\[([^\]]+)\]/g, (_, name: string) =>
    encodeURIComponent(params[name] ?? "1").replace(/%25([0-9A-F]{2})/gi, "%$1"),
  );
}

/** Path parameter values a route gets when the case is about something else. */
function defaultParams(route: Route): Record<string, string> {
  return Object.fromEntries(route.params.map((p) => [p, p === "key" ? "a".repeat(64) : "1"]));
}

async function call(c: Call): Promise<void> {
  calls++;
  const params = { ...defaultParams(c.route), ...c.params };
  let url: string;
  try {
    url = `${ORIGIN}${concretePath(c.route, params)}${c.query !== undefined ? `?${c.query}` : ""}`;
    new URL(url);
  } catch {
    url = `${ORIGIN}${c.route.template.replace(/\[[^\]]+\]/g, "1")}`;
  }
  const headers: Record<string, string> = { host: "localhost:3000", origin: ORIGIN };
  if (c.contentType !== "") headers["content-type"] = c.contentType ?? "application/json";
  const cookies = [c.admin ? adminCookie : "", c.cookie ?? ""].filter(Boolean).join("; ");
  if (cookies) headers.cookie = cookies;
  const withBody = c.method !== "GET" && c.method !== "HEAD";
  const request = new Request(url, {
    method: c.method,
    headers,
    ...(withBody ? { body: c.body ?? "{}" } : {}),
  });
  const label = `${c.method} ${url.slice(ORIGIN.length, ORIGIN.length + 160)} params=${JSON.stringify(
    c.params ?? {},
  ).slice(0, 80)} body=${(c.body ?? "").slice(0, 120)} type=${c.contentType ?? "json"} cookie=${
    c.cookie ?? ""
  } admin=${c.admin}`;
  let res: Response;
  try {
    res = (await c.handler(request, { params: Promise.resolve(params) })) as Response;
  } catch (err) {
    failures.push(`${label} → threw ${(err as Error).message.slice(0, 200)}`);
    return;
  } finally {
    if (c.route.template === "/api/auth/logout" && c.admin) await refreshAdminCookie();
  }
  if (res.status >= 500) {
    failures.push(`${label} → ${res.status} ${(await res.text()).slice(0, 200)}`);
    return;
  }
  if (res.status >= 400) {
    const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (!hasErrorShape(c.route, body)) {
      failures.push(`${label} → ${res.status} without the error shape: ${JSON.stringify(body)}`);
    }
  } else {
    await res.body?.cancel();
  }
}

/**
 * `{ error: { code, message } }`; the webhook answers a refused delivery in its own documented
 * shape, `{ outcome: "rejected", reason, message }` (and a foreign host in the common one).
 */
function hasErrorShape(route: Route, body: Record<string, unknown> | null): boolean {
  if (
    route.template === "/api/webhooks/stories" &&
    body?.outcome === "rejected" &&
    typeof body.reason === "string" &&
    typeof body.message === "string" &&
    body.message.length > 0
  ) {
    return true;
  }
  const error = body?.error as { code?: unknown; message?: unknown } | undefined;
  return (
    typeof error?.code === "string" && typeof error.message === "string" && error.message.length > 0
  );
}

/** Whether a GET answers 2xx to a parameter no route has: then it reads no query at all. */
async function ignoresQuery(route: Route, handler: Handler): Promise<boolean> {
  const url = `${ORIGIN}${concretePath(route, defaultParams(route))}?no-such-parameter=1`;
  const request = new Request(url, { headers: { host: "localhost:3000" } });
  const params = Promise.resolve(defaultParams(route));
  const res = (await handler(request, { params })) as Response;
  await res.body?.cancel();
  return res.status < 300;
}

function report(): string {
  return `${failures.length} of ${calls} calls failed:\n${failures.slice(0, 40).join("\n")}`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  await refreshAdminCookie();
  // Rows for the reads to walk: dead letters, a source, a story-api source for the webhook.
  await db.prisma.source.create({ data: { id: "s", name: "S", kind: "feed" } });
  await makeDeadLetters(db, "fetch", [{ key: "s/1", sourceId: "s" }]);
  // A built read model for the public routes (before the first build they answer 503
  // not_ready, as a fresh install does), read through this test's database.
  const openStore = () => openReadModelStore({ db, databaseUrl: undefined, redisUrl: undefined });
  const writer = await openStore();
  await seedReadModel(writer, { count: 30 });
  await writer.close();
  readModelGlobal.wirewatchReadModel = new ReadModel(openStore);
  routes = await loadRoutes();
});
afterAll(async () => {
  await readModelGlobal.wirewatchReadModel?.close();
  readModelGlobal.wirewatchReadModel = undefined;
  // Let a background repair's last write land before the database goes.
  await new Promise((r) => setTimeout(r, 300));
  await db?.drop();
});

describe("every route under app/api", () => {
  it("is found on disk, with its methods", () => {
    const found = routes.map((r) => r.template);
    expect(found).toContain("/api/sources/[id]/pause");
    expect(found).toContain("/api/webhooks/stories");
    expect(found.length).toBeGreaterThanOrEqual(26);
    expect(routes.every((r) => r.handlers.length > 0)).toBe(true);
  });

  it("answers hostile query parameters with a 4xx, never a 5xx", {
    timeout: FUZZ_TIMEOUT,
  }, async () => {
    failures.length = 0;
    for (const route of routes) {
      for (const [method, handler] of route.handlers) {
        const admin = method !== "GET";
        // Mutations read no query but the webhook's ?source=, and a read that accepts a name it
        // does not know (health, metrics, session) reads none: a few names are enough there.
        const few = admin || (await ignoresQuery(route, handler));
        for (const name of few ? ["source", "q", "unknown"] : PARAM_NAMES) {
          for (const value of RAW_VALUES) {
            await call({ route, method, handler, query: `${name}=${value}`, admin });
          }
          // Arrays where scalars go.
          await call({ route, method, handler, query: `${name}=a&${name}=b`, admin });
          await call({ route, method, handler, query: `${name}[]=a`, admin });
        }
      }
    }
    expect(failures, report()).toEqual([]);
  });

  it("answers hostile path parameters with a 4xx, never a 5xx", {
    timeout: FUZZ_TIMEOUT,
  }, async () => {
    failures.length = 0;
    for (const route of routes.filter((r) => r.params.length > 0)) {
      for (const [method, handler] of route.handlers) {
        for (const param of route.params) {
          for (const value of PATH_VALUES) {
            for (const admin of [false, true]) {
              await call({ route, method, handler, params: { [param]: value }, admin });
            }
          }
        }
      }
    }
    expect(failures, report()).toEqual([]);
  });

  it("answers hostile bodies and content types with a 4xx, never a 5xx", {
    timeout: FUZZ_TIMEOUT,
  }, async () => {
    failures.length = 0;
    for (const route of routes) {
      for (const [method, handler] of route.handlers.filter(([m]) => m !== "GET")) {
        for (const body of RAW_BODIES) await call({ route, method, handler, body, admin: false });
        for (const admin of [true]) {
          for (const body of RAW_BODIES) await call({ route, method, handler, body, admin });
          for (const field of BODY_FIELDS) {
            for (const value of BODY_VALUES) {
              const body = JSON.stringify({ [field]: value });
              await call({ route, method, handler, body, admin });
            }
          }
          for (const field of FILTER_FIELDS) {
            for (const value of BODY_VALUES) {
              const body = JSON.stringify({ filter: { [field]: value }, dryRun: true });
              await call({ route, method, handler, body, admin });
            }
          }
          for (const contentType of CONTENT_TYPES) {
            await call({ route, method, handler, body: "{}", contentType, admin });
            await call({ route, method, handler, body: "not json", contentType, admin });
          }
        }
      }
    }
    expect(failures, report()).toEqual([]);
  });

  it("answers malformed cookies without a 5xx, on every method", {
    timeout: FUZZ_TIMEOUT,
  }, async () => {
    failures.length = 0;
    for (const route of routes) {
      for (const [method, handler] of route.handlers) {
        for (const cookie of COOKIES) {
          await call({ route, method, handler, cookie, admin: false });
          await call({ route, method, handler, cookie, admin: true });
        }
      }
    }
    expect(failures, report()).toEqual([]);
  });

  it("answers generated queries and bodies without a 5xx (fast-check)", {
    timeout: FUZZ_TIMEOUT,
  }, async () => {
    failures.length = 0;
    const rawValue = fc.oneof(
      fc.constantFrom(...RAW_VALUES),
      hostileText.map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, "\u0000"))),
      fc
        .constantFrom("%ED%A0%80", "%E0%A4%A", "%00")
        .chain((bad) => fc.string({ maxLength: 8 }).map((s) => `${encodeURIComponent(s)}${bad}`)),
    );
    const query = fc
      .array(fc.tuple(fc.constantFrom(...PARAM_NAMES), rawValue), { maxLength: 4 })
      .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"));
    const body = fc.oneof(
      fc.dictionary(fc.constantFrom(...BODY_FIELDS), hostileJson, { maxKeys: 5 }),
      hostileJson,
    );
    const pathValue = fc.oneof(hostileText, fc.constantFrom(...PATH_VALUES));
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        query,
        body,
        pathValue,
        fc.boolean(),
        async (pick, q, b, p, admin) => {
          const route = routes[pick % routes.length] as Route;
          const [method, handler] = route.handlers[pick % route.handlers.length] as [
            string,
            Handler,
          ];
          const params = Object.fromEntries(route.params.map((name) => [name, p]));
          const before = failures.length;
          await call({
            route,
            method,
            handler,
            query: q,
            body: JSON.stringify(b) ?? "null",
            params,
            admin,
          });
          return failures.length === before;
        },
      ),
      { numRuns: 400 },
    );
    expect(failures, report()).toEqual([]);
  });
});

/** One request to a route by its template, for the cases below. */
async function hit(
  template: string,
  method: string,
  c: { params?: Record<string, string>; query?: string; body?: unknown; cookie?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const route = routes.find((r) => r.template === template);
  const handler = route?.handlers.find(([m]) => m === method)?.[1];
  if (!route || !handler) throw new Error(`no ${method} ${template}`);
  const params = { ...defaultParams(route), ...c.params };
  const headers: Record<string, string> = {
    host: "localhost:3000",
    origin: ORIGIN,
    "content-type": "application/json",
    cookie: c.cookie ?? adminCookie,
  };
  const url = `${ORIGIN}${route.template.replace(/\[[^\]]+\]/g, "1")}${c.query ? `?${c.query}` : ""}`;
  const request = new Request(url, {
    method,
    headers,
    ...(method === "GET" ? {} : { body: JSON.stringify(c.body ?? {}) }),
  });
  const res = (await handler(request, { params: Promise.resolve(params) })) as Response;
  return {
    status: res.status,
    body: (await res.json().catch(() => ({}))) as Record<string, unknown>,
  };
}

const errorMessage = (body: Record<string, unknown>) =>
  (body.error as { message?: string } | undefined)?.message ?? "";

describe("malformed requests get a 400 naming the parameter", () => {
  const cases: [string, string, Parameters<typeof hit>[2], RegExp][] = [
    ["/api/items", "GET", { query: "q=%00" }, /^q: /],
    ["/api/items", "GET", { query: "source=a%00b" }, /^source: /],
    ["/api/items", "GET", { query: "q=a&q=b" }, /^q: given more than once/],
    ["/api/items", "GET", { query: `cursor=${cursorOf(["2026", "x"])}` }, /^cursor: /],
    ["/api/items", "GET", { query: `cursor=${cursorOf([FEB_30, "a".repeat(64)])}` }, /^cursor: /],
    ["/api/items", "GET", { query: `cursor=${cursorOf([JAN_1, "\u0000"])}` }, /^cursor: /],
    ["/api/items/[key]", "GET", { query: "after=9999999999999999999" }, /^after: /],
    ["/api/dead-letters", "GET", { query: "stage=%00" }, /^stage: /],
    ["/api/dead-letters", "GET", { query: "cursor=9999999999999999999" }, /^cursor: /],
    ["/api/dead-letters/groups", "GET", { query: "code=%00" }, /^code: /],
    ["/api/dead-letters/[id]", "GET", { params: { id: "9999999999999999999" } }, /^id: /],
    ["/api/audit", "GET", { query: "action=%00" }, /^action: /],
    ["/api/audit", "GET", { query: `before=${INT64_PLUS_ONE}` }, /^before: /],
    ["/api/repairs", "GET", { query: `before=${INT64_PLUS_ONE}` }, /^before: /],
    ["/api/repairs/[id]", "GET", { params: { id: "9999999999999999999" } }, /^id: /],
    ["/api/repairs/[id]", "GET", { query: `after=${INT64_PLUS_ONE}` }, /^after: /],
    ["/api/sources", "GET", { query: "limit=201" }, /^limit: /],
    ["/api/sources", "GET", { query: "limit=0" }, /^limit: /],
    ["/api/sources", "GET", { query: "sort=priority" }, /^sort: /],
    ["/api/sources", "GET", { query: "dir=up" }, /^dir: /],
    ["/api/sources", "GET", { query: "health=sick" }, /^health: /],
    ["/api/sources", "GET", { query: "breaker=shut" }, /^breaker: /],
    ["/api/sources", "GET", { query: "kind=rss" }, /^kind: /],
    ["/api/sources", "GET", { query: "q=%00" }, /^q: /],
    ["/api/sources", "GET", { query: "cursor=!!!notbase64!!!" }, /^cursor: not valid/],
    [
      "/api/sources",
      "GET",
      { query: `sort=health&cursor=${cursorOf(["name", "asc", "S", "s"])}` },
      /^cursor: made for another sort/,
    ],
    [
      "/api/sources",
      "GET",
      { query: `sort=errorRate&cursor=${cursorOf(["errorRate", "asc", "NaN", "s"])}` },
      /^cursor: not valid/,
    ],
    ["/api/sources/[id]", "GET", { params: { id: "\u0000" } }, /^id: /],
    ["/api/sources/[id]", "GET", { params: { id: "\uD800" } }, /^id: /],
    ["/api/sources/[id]/pause", "POST", { params: { id: "a\u0000" } }, /^id: /],
    ["/api/sources/[id]/resume", "POST", { params: { id: "\u0000" } }, /^id: /],
    ["/api/sources/[id]/fetch-now", "POST", { params: { id: "\uDC00" } }, /^id: /],
    ["/api/sources/[id]/render-preview", "POST", { params: { id: "\u0000" } }, /^id: /],
    [
      "/api/dead-letters/requeue",
      "POST",
      { body: { filter: { stage: "\u0000" }, dryRun: true } },
      /^filter\.stage: /,
    ],
    [
      "/api/dead-letters/discard",
      "POST",
      { body: { filter: { source: "\uD800" }, dryRun: true } },
      /^filter\.source: /,
    ],
    [
      "/api/dead-letters/discard",
      "POST",
      { body: { filter: { ids: [INT64_PLUS_ONE] } } },
      /^filter\.ids\.0: /,
    ],
    [
      "/api/chaos",
      "POST",
      { body: { action: "set", stage: "fetch", sourceId: "\uD800" } },
      /^sourceId: /,
    ],
  ];
  it.each(cases)("%s %s %j", async (template, method, c, message) => {
    const res = await hit(template, method, c);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "bad_request" });
    expect(errorMessage(res.body)).toMatch(message);
  });

  it("the webhook refuses ?source= with a NUL as a 400 in its own shape, not a 503", async () => {
    const res = await hit("/api/webhooks/stories", "POST", { query: "source=%00" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ outcome: "rejected", reason: "unknown_source" });
    expect(res.body.message).toMatch(/^source: /);
  });

  it("a malformed session cookie is no session: read as logged out, refused as 401", async () => {
    const cookie = `${SESSION_COOKIE}=%E0%A4%A`;
    const status = await hit("/api/auth/session", "GET", { cookie });
    expect(status).toMatchObject({ status: 200, body: { loggedIn: false } });
    const pause = await hit("/api/sources/[id]/pause", "POST", { params: { id: "s" }, cookie });
    expect(pause.status).toBe(401);
    expect(pause.body.error).toMatchObject({ code: "unauthorized" });
    const logout = await hit("/api/auth/logout", "POST", { cookie });
    expect(logout).toMatchObject({ status: 200, body: { loggedOut: true, revoked: false } });
  });
});
