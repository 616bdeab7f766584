import { text } from "@/lib/validation";

/** A queue name in the path: short text, not trimmed; an unknown queue is a 404 from the action. */
export const QueueParam = text(100, { min: 1, trim: false });
