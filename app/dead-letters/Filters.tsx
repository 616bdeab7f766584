import s from "./deadLetters.module.css";

const SINCE = [
  { label: "any time", hours: 0 },
  { label: "last hour", hours: 1 },
  { label: "last 6 hours", hours: 6 },
  { label: "last 24 hours", hours: 24 },
  { label: "last 7 days", hours: 24 * 7 },
];

/** The filter form as typed; `from` is the instant the chosen "Died" window opened. */
export interface FilterFields {
  stage: string;
  source: string;
  code: string;
  sinceHours: number;
  from?: string;
}

export const NO_FILTER: FilterFields = { stage: "", source: "", code: "", sinceHours: 0 };

/** Stage, source, error code and when they died; `stages` are the ones with dead letters. */
export function Filters({
  fields,
  stages,
  onChange,
}: {
  fields: FilterFields;
  stages: string[];
  onChange: (next: FilterFields) => void;
}) {
  const set = (change: Partial<FilterFields>) => onChange({ ...fields, ...change });
  return (
    <form
      className={s.filters}
      aria-label="Filter dead letters"
      onSubmit={(e) => e.preventDefault()}
    >
      <label>
        Stage
        <select value={fields.stage} onChange={(e) => set({ stage: e.target.value })}>
          <option value="">all stages</option>
          {[...new Set([...stages, fields.stage].filter(Boolean))].map((q) => (
            <option key={q} value={q}>
              {q}
            </option>
          ))}
        </select>
      </label>
      <label>
        Source
        <input
          value={fields.source}
          placeholder="source id"
          onChange={(e) => set({ source: e.target.value })}
        />
      </label>
      <label>
        Error code
        <input
          value={fields.code}
          placeholder="e.g. http_503"
          onChange={(e) => set({ code: e.target.value })}
        />
      </label>
      <label>
        Died
        <select
          value={fields.sinceHours}
          onChange={(e) => {
            const hours = Number(e.target.value);
            set({
              sinceHours: hours,
              from: hours ? new Date(Date.now() - hours * 3600_000).toISOString() : undefined,
            });
          }}
        >
          {SINCE.map((o) => (
            <option key={o.hours} value={o.hours}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
    </form>
  );
}
