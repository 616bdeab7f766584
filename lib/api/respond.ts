import type { z } from "zod";

/** A JSON answer; dashboard data is never cached by browsers or proxies. */
export function json(data: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("cache-control", "no-store");
  return Response.json(data, { ...init, headers });
}

/** The one error shape every route answers with: `{ error: { code, message } }`. */
export function apiError(
  status: number,
  code: string,
  message: string,
  headers: HeadersInit = {},
): Response {
  return json({ error: { code, message } }, { status, headers });
}

type Parsed<T> = { ok: true; value: T } | { ok: false; response: Response };

function badRequest(issues: z.core.$ZodIssue[], fallback: string): Response {
  const issue = issues[0];
  return apiError(
    400,
    "bad_request",
    `${issue?.path.join(".") || fallback}: ${issue?.message ?? "invalid"}`,
  );
}

/**
 * Parses a request's query string with a zod schema; a 400 naming the parameter when it fails.
 * A parameter given twice (`?q=a&q=b`) is refused rather than one of them silently winning.
 */
export function parseQuery<S extends z.ZodType>(request: Request, schema: S): Parsed<z.infer<S>> {
  const params = new Map<string, string>();
  for (const [name, value] of new URL(request.url).searchParams) {
    if (params.has(name)) {
      return {
        ok: false,
        response: apiError(400, "bad_request", `${name.slice(0, 100)}: given more than once`),
      };
    }
    params.set(name, value);
  }
  const parsed = schema.safeParse(Object.fromEntries(params));
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, response: badRequest(parsed.error.issues, "query") };
}

/**
 * Parses one path parameter (`/api/sources/:id`) with a zod schema; a 400 naming it when it
 * fails. Next.js hands the segment over decoded, so it can hold a NUL or a lone surrogate.
 */
export function parseParam<S extends z.ZodType>(
  name: string,
  value: string,
  schema: S,
): Parsed<z.infer<S>> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    response: badRequest(
      parsed.error.issues.map((i) => ({ ...i, path: [name] })),
      name,
    ),
  };
}

/**
 * A 400 for a path Next.js cannot decode ("/api/sources/%ED%A0%80": a lone surrogate, or a cut
 * sequence like "%E0%A4%A"), or null. Next.js itself answers those with a bare 500 before any
 * route runs (its 400 page is not there to render), so proxy.ts asks this first.
 */
export function refuseUndecodablePath(pathname: string): Response | null {
  try {
    decodeURIComponent(pathname);
    return null;
  } catch {
    return apiError(400, "bad_request", "path: not valid percent-encoded UTF-8");
  }
}
