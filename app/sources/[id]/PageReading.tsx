"use client";

import { useMutation } from "@tanstack/react-query";
import { postJson } from "@/components/hooks/api";
import type { SourceDetailJson } from "@/components/hooks/useSource";
import { ms, relative } from "@/lib/dashboard/format";
import type { RenderPreview } from "@/workers/sources/renderPreview";
import styles from "../sources.module.css";

type Reading = NonNullable<SourceDetailJson["reading"]>;

const MODE_NAMES = { http: "HTTP (as served)", browser: "Browser (rendered)" } as const;

/**
 * How a page source is read and what each way costs: looks, CPU per look (this process's for
 * HTTP, the renderer's for the browser), time, requests, headlines found and requests refused,
 * over the last day. When the page as served shows no headline, the browser is offered: a
 * preview renders it once, writing nothing, before anyone switches the source over.
 */
export function PageReading({
  sourceId,
  reading,
  editable,
}: {
  sourceId: string;
  reading: Reading;
  editable: boolean;
}) {
  const now = Date.now();
  return (
    <section className={`${styles.panel} ${styles.reading}`} data-testid="page-reading">
      <h3>Reading the page: {MODE_NAMES[reading.render]}</h3>
      {reading.modes.length === 0 ? (
        <p className={styles.sub}>No look at the page in the last day.</p>
      ) : (
        <div className={styles.scroll}>
          <table className="sources" data-testid="reading-costs">
            <thead>
              <tr>
                <th scope="col">Read by</th>
                <th scope="col" className="num">
                  Looks (24 h)
                </th>
                <th scope="col" className="num">
                  CPU per look (median · p95)
                </th>
                <th scope="col" className="num">
                  CPU in all
                </th>
                <th scope="col" className="num">
                  Time per look
                </th>
                <th scope="col" className="num">
                  Requests
                </th>
                <th scope="col" className="num">
                  Headlines
                </th>
                <th scope="col" className="num">
                  Refused
                </th>
              </tr>
            </thead>
            <tbody>
              {reading.modes.map((m) => (
                <tr key={m.mode} data-mode={m.mode}>
                  <td>{MODE_NAMES[m.mode]}</td>
                  <td className="num">{m.looks}</td>
                  <td className="num" data-testid={`cpu-${m.mode}`}>
                    {ms(m.cpuMsMedian)} · {ms(m.cpuMsP95)}
                  </td>
                  <td className="num">{m.cpuSecondsTotal.toFixed(2)} CPU-s</td>
                  <td className="num">{ms(m.wallMsMedian)}</td>
                  <td className="num">{m.requestsMedian}</td>
                  <td className="num">{m.headlinesMedian}</td>
                  <td className="num">{m.blocked}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {reading.lastBlocked ? (
        <details data-testid="refused-requests">
          <summary>
            Requests the page made that were refused, latest look{" "}
            {relative(reading.lastBlocked.at, now)}
          </summary>
          <RefusedList refused={reading.lastBlocked.detail} />
        </details>
      ) : null}
      {reading.offerBrowser ? <BrowserOffer sourceId={sourceId} editable={editable} /> : null}
    </section>
  );
}

function BrowserOffer({ sourceId, editable }: { sourceId: string; editable: boolean }) {
  const preview = useMutation({
    mutationFn: () =>
      postJson<{ preview: RenderPreview }>(
        `/api/sources/${encodeURIComponent(sourceId)}/render-preview`,
      ),
  });
  const p = preview.data?.preview;
  return (
    <div className={styles.offer} data-testid="browser-offer" role="note">
      <p>
        The page as served shows no headline: it may build them with scripts. A headless browser can
        run them, at the CPU cost shown once it has.
      </p>
      <button
        type="button"
        className={styles.button}
        disabled={preview.isPending}
        onClick={() => preview.mutate()}
      >
        {preview.isPending ? "Rendering…" : "Try it in a browser"}
      </button>
      {preview.error ? (
        <p className={`${styles.message} ${styles.failed}`} role="alert">
          Preview refused: {preview.error.message}
        </p>
      ) : null}
      {p ? (
        <div data-testid="render-preview" role="status">
          {p.problem ? (
            <p className={styles.failed}>
              {p.problem.code}: {p.problem.message}
            </p>
          ) : (
            <>
              <p>
                As served: <strong>{p.served}</strong> headlines. Rendered:{" "}
                <strong data-testid="rendered-count">{p.rendered}</strong> headlines, {ms(p.cpuMs)}{" "}
                of CPU, {ms(p.wallMs)}, {p.requests} requests
                {p.blocked ? `, ${p.blocked} refused` : ""}.
              </p>
              {p.blockedDetail.length ? (
                <details>
                  <summary>Refused requests</summary>
                  <RefusedList refused={p.blockedDetail} />
                </details>
              ) : null}
              <ul className={styles.sub}>
                {p.headlines.slice(0, 5).map((h) => (
                  <li key={h.link}>{h.title}</li>
                ))}
              </ul>
              <p className={styles.sub}>
                {editable
                  ? 'To read it this way from now on, choose "rendered in a browser" in the settings above.'
                  : 'This source comes from the sources file: set "render": "browser" on it there.'}
              </p>
            </>
          )}
        </div>
      ) : null}
    </div>
  );
}

function RefusedList({ refused }: { refused: { url: string; reason: string }[] }) {
  return (
    <ul className={styles.sub}>
      {refused.map((d) => (
        <li key={`${d.url} ${d.reason}`}>
          <code>{d.url}</code>: {d.reason}
        </li>
      ))}
    </ul>
  );
}
