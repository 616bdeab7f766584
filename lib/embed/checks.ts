import { EmbeddingError } from "./types";

/**
 * One call embeds at most this many texts: OpenAI's /v1/embeddings takes 2,048 inputs, and a
 * backfill hands over a few hundred at a time, so a longer list is a caller's mistake.
 */
export const MAX_TEXTS_PER_CALL = 2_048;

/**
 * A text longer than this is refused, not cut: the store's longest title (2,000 characters) and
 * summary (20,000, workers/store/observation.ts LIMITS) fit with a separator. English runs about
 * 4 characters a token, so 24,000 is about 6,000 tokens, inside the usual 8,192-token limit of
 * an embeddings API; USE-lite takes about 1.6 s on one core for 20,000 characters. What to cut
 * is the caller's choice.
 */
export const MAX_TEXT_CHARS = 24_000;

/**
 * The texts every provider accepts: a non-empty list of texts with something besides white space
 * in each. An empty text has no meaning to embed: USE-lite silently drops it from its batch (so
 * the vectors after it would shift), OpenAI answers 400, and its lexical vector is all zeros,
 * which has no unit length. So every provider refuses it the same way, naming its position.
 */
export function checkTexts(texts: readonly string[]): void {
  if (!Array.isArray(texts)) {
    throw new EmbeddingError(`texts must be a list of strings, not a ${typeof texts}`, "bad_input");
  }
  if (texts.length === 0) {
    throw new EmbeddingError("nothing to embed: the list of texts is empty", "bad_input");
  }
  if (texts.length > MAX_TEXTS_PER_CALL) {
    throw new EmbeddingError(
      `${texts.length} texts in one call; at most ${MAX_TEXTS_PER_CALL}`,
      "bad_input",
    );
  }
  texts.forEach((text, i) => {
    if (typeof text !== "string") {
      throw new EmbeddingError(`text ${i} is a ${typeof text}, not a string`, "bad_input");
    }
    if (text.trim() === "") {
      throw new EmbeddingError(`text ${i} is empty: there is nothing to embed`, "bad_input");
    }
    if (text.length > MAX_TEXT_CHARS) {
      throw new EmbeddingError(
        `text ${i} has ${text.length} characters; at most ${MAX_TEXT_CHARS}`,
        "bad_input",
      );
    }
  });
}
