import type { ExtractInput } from "./types";

/**
 * What every provider refuses as bad_input before any work or call: no provider would do
 * better with it, so the chain does not fall over and the job does not retry it.
 *
 * 1,000 characters of title and 20,000 of summary: a headline runs 50-150, a feed's summary a
 * few hundred, a full article pasted as summary ~10,000; past that the input is not an item's
 * text, and a paid model would bill ~5,000 tokens for it.
 */
export const MAX_TITLE_CHARS = 1_000;
export const MAX_SUMMARY_CHARS_IN = 20_000;

/** Why the input is unusable, or null. */
export function inputProblem(input: ExtractInput): string | null {
  if (typeof input.title !== "string" || input.title.trim() === "") {
    return "the title is empty: there is nothing to extract from";
  }
  if (input.title.length > MAX_TITLE_CHARS) {
    return `the title is ${input.title.length} characters, over the ${MAX_TITLE_CHARS} a title may have`;
  }
  const summary = input.summary ?? "";
  if (typeof summary !== "string") return "the summary is not text";
  if (summary.length > MAX_SUMMARY_CHARS_IN) {
    return `the summary is ${summary.length} characters, over the ${MAX_SUMMARY_CHARS_IN} taken`;
  }
  return null;
}

/** Summary text as a reader sees it: tags dropped, entities of white space and runs collapsed. */
export function plainText(text: string | null | undefined): string {
  if (!text) return "";
  return text
    .replace(/<[^>]{0,2000}>/g, " ")
    .replace(/&nbsp;|&#160;/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** A raw answer kept for the dead letter and the correction prompt: 4 KiB. */
export const MAX_RAW_BYTES = 4_096;

/** At most `maxBytes` of UTF-8, cut at a character, an ellipsis marking the cut. */
export function truncate(text: string, maxBytes = MAX_RAW_BYTES): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let cut = text.slice(0, maxBytes);
  while (Buffer.byteLength(cut) > maxBytes - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}
