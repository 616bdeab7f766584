/**
 * PostgreSQL array literals for the queue's batch statements, built in one pass. node-postgres
 * quotes and escapes every element of a JS array parameter with a regular expression each: for
 * a batch of 1,000 jobs, five arrays of it were a third of enqueue's client time, and 6 % of a
 * worker's busy time in completions. The literal goes as one text parameter, cast in SQL
 * (`$1::int[]`), so the server parses it exactly as it parsed the arrays before.
 */

/** `{1,2,3}`; a value that is not a finite number is refused (it would reach SQL as NaN). */
export function numberArray(values: readonly number[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isFinite(v)) throw new TypeError(`not a finite number: ${v}`);
    out += i === 0 ? String(v) : `,${v}`;
  }
  return `${out}}`;
}

const NEEDS_ESCAPE = /["\\]/g;

/** `{"a","b\"c",NULL}`: every element quoted, `"` and `\` escaped, null as NULL. */
export function textArray(values: readonly (string | null)[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const element = v === null || v === undefined ? "NULL" : `"${v.replace(NEEDS_ESCAPE, "\\$&")}"`;
    out += i === 0 ? element : `,${element}`;
  }
  return `${out}}`;
}
