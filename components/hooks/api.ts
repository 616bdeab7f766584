/** An API error as the routes send it: `{ error: { code, message } }` with an HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

async function read<T>(res: Response): Promise<T> {
  const body = (await res.json().catch(() => null)) as
    | (T & { error?: { code?: string; message?: string } })
    | null;
  if (!res.ok) {
    const retryAfter = Number(res.headers.get("retry-after"));
    throw new ApiError(
      res.status,
      body?.error?.code ?? `http_${res.status}`,
      body?.error?.message ?? res.statusText,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    );
  }
  return body as T;
}

/** GET a dashboard API as JSON; query parameters with undefined or empty values are left out. */
export async function getJson<T>(
  path: string,
  params: Record<string, string | number | boolean | undefined | null> = {},
): Promise<T> {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") query.set(k, String(v));
  }
  const qs = query.toString();
  return read<T>(
    await fetch(qs ? `${path}?${qs}` : path, { headers: { accept: "application/json" } }),
  );
}

/** POST JSON to a dashboard API (mutations need the admin session cookie, sent same-origin). */
export async function postJson<T>(path: string, body: unknown = {}, method = "POST"): Promise<T> {
  return read<T>(
    await fetch(path, {
      method,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    }),
  );
}

/** PUT JSON to a dashboard API (a setting replaced whole), as postJson. */
export const putJson = <T>(path: string, body: unknown): Promise<T> =>
  postJson<T>(path, body, "PUT");
