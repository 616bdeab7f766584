import { createHash } from "node:crypto";
import { canonicalId } from "@/lib/canonical";
import type { EntryFields, ParsedEntry } from "./types";

/** Drops empty optional fields so `"summary" in entry` means there is one. */
function compact(fields: EntryFields): EntryFields {
  const out: EntryFields = { title: fields.title, categories: fields.categories };
  for (const key of [
    "guid",
    "atomId",
    "link",
    "published",
    "updated",
    "summary",
    "author",
  ] as const) {
    const value = fields[key];
    if (value) out[key] = value;
  }
  return out;
}

/**
 * The entry with its identity. An entry with no guid, id, usable link or title still gets a
 * stable id, a hash of what it does carry, so the same item maps to the same row on every
 * poll rather than being dropped without a trace.
 */
export function finishEntry(fields: EntryFields): ParsedEntry {
  const entry = compact(fields);
  const id =
    canonicalId({
      guid: entry.guid,
      atomId: entry.atomId,
      link: entry.link,
      title: entry.title,
      published: entry.published,
    }) ?? `sha256:${createHash("sha256").update(JSON.stringify(entry)).digest("hex")}`;
  return { ...entry, id };
}
