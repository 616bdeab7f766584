import type { PageHeadline, SimStory } from "../newsroom";
import { FEED_FORMATS, FEED_SUFFIX, type Outlet } from "../outlets";
import { esc } from "./xml";

/**
 * The outlet's rendered front page: headlines as links and nothing else, which is all the
 * fallback observer gets (no category, no breaking flag, no instruments).
 */
export function renderPage(outlet: Outlet, items: PageHeadline[]): string {
  const lang = outlet.languages.length === 1 ? outlet.languages[0] : "en";
  // The feeds a site advertises, as feed readers discover them (simulator/sources.ts serves each).
  const feeds = FEED_FORMATS.map(
    (f) =>
      `<link rel="alternate" type="${FEED_TYPE[f]}" title="${esc(outlet.name)} (${f})" href="/s/${outlet.id}-${FEED_SUFFIX[f]}/feed.xml">`,
  );
  const list = items.map(
    (s) =>
      `<li lang="${s.language}"><a class="headline" href="${esc(s.link)}">${esc(s.title)}</a></li>`,
  );
  return `<!doctype html>
<html lang="${lang}">
<head><meta charset="utf-8"><title>${esc(outlet.name)}</title>
${feeds.join("\n")}</head>
<body>
<h1>${esc(outlet.name)}</h1>
<ul class="headlines">
${list.join("\n")}
</ul>
</body>
</html>
`;
}

const FEED_TYPE = {
  rss2: "application/rss+xml",
  rdf: "application/rdf+xml",
  atom: "application/atom+xml",
} as const;

/** A story's own page, so every link in a feed resolves. */
export function renderStory(outlet: Outlet, story: SimStory): string {
  const body =
    story.retractedAt === null
      ? `<h1>${esc(story.title)}</h1>\n<p>${esc(story.summary)}</p>`
      : "<h1>This story has been retracted.</h1>";
  return `<!doctype html>
<html lang="${story.language}">
<head><meta charset="utf-8"><title>${esc(outlet.name)}</title></head>
<body>
${body}
</body>
</html>
`;
}

/**
 * The outlet's front page as a script-built site serves it: an empty list and a script that
 * fills it from `headlines.json`. Its HTML names no headline, so a reader that does not run
 * scripts finds none. `hostile` adds what a compromised third-party script does: requests for
 * this machine, the cloud metadata service and an intranet name (each must be refused).
 */
export function renderScriptedPage(outlet: Outlet, hostile: { port: number } | null): string {
  const lang = outlet.languages.length === 1 ? outlet.languages[0] : "en";
  const probes = hostile
    ? [
        `http://127.0.0.1:${hostile.port === 1 ? 2 : 1}/admin`,
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        `http://localhost:${hostile.port}/_control/faults`,
        "http://metadata.google.internal/computeMetadata/v1/",
      ]
    : [];
  const probeScript = probes.map((u) => `fetch(${JSON.stringify(u)}).catch(() => {});`).join("\n");
  return `<!doctype html>
<html lang="${lang}">
<head><meta charset="utf-8"><title>${esc(outlet.name)}</title></head>
<body>
<h1>${esc(outlet.name)}</h1>
<ul class="headlines" id="headlines"><li>Loading…</li></ul>
<script>
fetch("headlines.json", { headers: { accept: "application/json" } })
  .then((r) => r.json())
  .then((items) => {
    const list = document.getElementById("headlines");
    list.textContent = "";
    for (const item of items) {
      const li = document.createElement("li");
      li.lang = item.language;
      const a = document.createElement("a");
      a.className = "headline";
      a.href = item.link;
      a.textContent = item.title;
      li.append(a);
      list.append(li);
    }
  });
${probeScript}
</script>
</body>
</html>
`;
}
