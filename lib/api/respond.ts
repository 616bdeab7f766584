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

/** Parses a request's query string with a zod schema; a 400 naming the parameter when it fails. */
export function parseQuery<S extends z.ZodType>(
  request: Request,
  schema: S,
): { ok: true; value: z.infer<S> } | { ok: false; response: Response } {
  const params = Object.fromEntries(new URL(request.url).searchParams);
  const parsed = schema.safeParse(params);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    ok: false,
    response: apiError(
      400,
      "bad_request",
      `${issue?.path.join(".") || "query"}: ${issue?.message ?? "invalid"}`,
    ),
  };
}
