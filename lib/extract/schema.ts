import { z } from "zod";
import { CATEGORIES, ENTITY_TYPES, EXTRACTION_LANGUAGES, type Extraction } from "./types";

/**
 * The declared structure every provider's answer must satisfy before anything trusts it (seed
 * 002: "every response validated against a declared structure"). The same schema is sent to a
 * chat model as its structured output's JSON Schema, so a model that honours structured output
 * answers it, and one that does not is refused here all the same.
 *
 * Validation normalises only what cannot change the meaning: white space trimmed, entities
 * that repeat (the same text and type, any letter case) kept once. It never guesses: a language
 * or category outside the lists, an entity type it does not know, a summary over its cap is an
 * error fed back to the model (the correction retry), not something mapped to the nearest value.
 */

/** The most entities an extraction keeps: a headline and its summary name far fewer. */
export const MAX_ENTITIES = 50;
export const MAX_ENTITY_CHARS = 200;
export const MAX_SUMMARY_CHARS = 300;

const entity = z.strictObject({
  text: z.string().trim().min(1).max(MAX_ENTITY_CHARS),
  type: z.enum(ENTITY_TYPES),
});

/** The extraction as zod checks it (strict: an unknown field is an error, not ignored). */
export const extractionSchema = z.strictObject({
  language: z.enum(EXTRACTION_LANGUAGES),
  category: z.enum(CATEGORIES).nullable(),
  entities: z.array(entity).max(MAX_ENTITIES),
  summary: z.string().trim().max(MAX_SUMMARY_CHARS).nullable(),
});

export type ValidationResult = { ok: true; value: Extraction } | { ok: false; errors: string[] };

/** The errors fed back to a model: a few are enough to correct, all of them drown the prompt. */
const MAX_ERRORS = 12;

/**
 * The candidate as a valid Extraction, or readable errors ("entities.3.type: expected one of
 * person|place|organization|instrument, got \"company\""), each naming where and what.
 */
export function validateExtraction(candidate: unknown): ValidationResult {
  const parsed = extractionSchema.safeParse(candidate);
  if (!parsed.success) {
    const errors = parsed.error.issues
      .slice(0, MAX_ERRORS)
      .map((issue) => explain(issue, candidate));
    const more = parsed.error.issues.length - MAX_ERRORS;
    if (more > 0) errors.push(`… and ${more} more`);
    return { ok: false, errors };
  }
  const value = parsed.data;
  const seen = new Set<string>();
  const entities = value.entities.filter((e) => {
    const key = `${e.type}\u0000${e.text.toLocaleLowerCase()}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return {
    ok: true,
    value: {
      language: value.language,
      category: value.category,
      entities,
      // An empty summary says nothing: the item had none to add.
      summary: value.summary === "" ? null : value.summary,
    },
  };
}

/** What each field must be, for a missing one (zod's "expected string" says less). */
const FIELD_HINTS: Record<string, string> = {
  language: `one of ${EXTRACTION_LANGUAGES.join("|")}`,
  category: `one of ${CATEGORIES.join("|")}, or null`,
  entities: "an array of {text, type}",
  summary: `a string of at most ${MAX_SUMMARY_CHARS} characters, or null`,
  text: `a string of 1 to ${MAX_ENTITY_CHARS} characters`,
  type: `one of ${ENTITY_TYPES.join("|")}`,
};

function explain(issue: z.core.$ZodIssue, candidate: unknown): string {
  const where = issue.path.length > 0 ? issue.path.join(".") : "the answer";
  const got = valueAt(candidate, issue.path);
  const field = String(issue.path[issue.path.length - 1] ?? "");
  if (got === undefined && issue.path.length > 0 && FIELD_HINTS[field]) {
    return `${where}: missing (expected ${FIELD_HINTS[field]})`;
  }
  const shown = got === undefined ? "" : `, got ${preview(got)}`;
  switch (issue.code) {
    case "invalid_value":
      return `${where}: expected one of ${issue.values.map((v) => String(v)).join("|")}${shown}`;
    case "too_small":
      return `${where}: must not be empty${shown}`;
    case "too_big":
      return `${where}: too long (at most ${String(issue.maximum)} ${issue.origin === "array" ? "items" : "characters"})${shown}`;
    case "unrecognized_keys":
      return `${where}: unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")} (only language, category, entities, summary; an entity has text and type)`;
    case "invalid_type":
      return `${where}: expected ${FIELD_HINTS[field] ?? issue.expected}${shown}`;
    default:
      return `${where}: ${issue.message}${shown}`;
  }
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let at: unknown = root;
  for (const key of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/**
 * The schema as JSON Schema for a chat model's structured output. OpenAI's strict mode wants
 * every property required and no additional properties (the zod schema says both) and refuses
 * length and size keywords (minLength, maxLength, maxItems), so those are left out here: the
 * system prompt states the limits and validateExtraction enforces them.
 */
export function extractionJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(extractionSchema, { target: "draft-7" }) as Record<string, unknown>;
  delete schema.$schema;
  return strip(schema) as Record<string, unknown>;
}

const UNSUPPORTED = new Set(["minLength", "maxLength", "minItems", "maxItems"]);

function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !UNSUPPORTED.has(key))
      .map(([key, value]) => [key, strip(value)]),
  );
}
