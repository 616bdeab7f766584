import type { z } from "zod";
import { refuseForeignHost } from "../auth/hosts";
import { apiError } from "./respond";

/**
 * The default cap of a JSON request body: 1 MiB. The largest body the dashboard sends is a
 * dead-letter selection of 10,000 ids, about 230 KB; anything past the cap is refused, never
 * buffered.
 */
export const JSON_BODY_LIMIT = 1024 * 1024;

export type BodyResult<T> = { ok: true; value: T } | { ok: false; response: Response };

/** The 413 every route answers for a body over its cap. */
export function tooLarge(limit: number): Response {
  return apiError(413, "too_large", `the request body is larger than ${limit} bytes`);
}

/**
 * A request's raw body, read as a stream and counted: refused before reading when it declares a
 * Content-Length over `limit`, and the moment the bytes read pass `limit` (the stream is
 * cancelled, so a chunked body of any size costs at most `limit` plus one chunk of memory).
 * The one body reader of every route (JSON bodies go through readJsonBody).
 *
 * It checks the Host first (lib/auth/hosts.ts): proxy.ts, which checks it for every other
 * request, does not run for one with a body.
 */
export async function readBodyBytes(
  request: Request,
  { limit }: { limit: number },
): Promise<BodyResult<Buffer>> {
  const foreign = refuseForeignHost(request);
  if (foreign) {
    await request.body?.cancel().catch(() => {});
    return { ok: false, response: foreign };
  }
  const declared = request.headers.get("content-length");
  if (declared !== null && (!/^\d+$/.test(declared.trim()) || Number(declared) > limit)) {
    await request.body?.cancel().catch(() => {});
    return { ok: false, response: tooLarge(limit) };
  }
  if (!request.body) return { ok: true, value: Buffer.alloc(0) };
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return { ok: false, response: tooLarge(limit) };
      }
      chunks.push(Buffer.from(value));
    }
  } catch {
    return {
      ok: false,
      response: apiError(400, "bad_request", "the request body could not be read to its end"),
    };
  } finally {
    reader.releaseLock();
  }
  return { ok: true, value: Buffer.concat(chunks) };
}

/**
 * Reads a JSON body (at most `limit` bytes, 1 MiB by default, else 413) and parses it with a
 * schema: 400 when it is not UTF-8 JSON or the schema refuses it, naming the field. The same
 * `{ ok, value } | { ok: false, response }` shape as parseQuery (lib/api/respond.ts).
 */
export async function readJsonBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  { limit = JSON_BODY_LIMIT }: { limit?: number } = {},
): Promise<BodyResult<z.infer<S>>> {
  const bytes = await readBodyBytes(request, { limit });
  if (!bytes.ok) return bytes;
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.value));
  } catch {
    return { ok: false, response: apiError(400, "bad_request", "body: expected UTF-8 JSON") };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    ok: false,
    response: apiError(
      400,
      "bad_request",
      `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
    ),
  };
}
