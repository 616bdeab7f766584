import type { z } from "zod";
import { SimError } from "./newsroom";

/** A control API body, validated: the value, or a 400 naming each bad field. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new SimError(
      parsed.error.issues.map((i) => `${i.path.join(".") || "body"} ${i.message}`).join("; "),
    );
  }
  return parsed.data;
}
