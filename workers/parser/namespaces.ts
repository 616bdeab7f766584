export const NS = {
  atom10: "http://www.w3.org/2005/Atom",
  atom03: "http://purl.org/atom/ns#",
  rss10: "http://purl.org/rss/1.0/",
  rss090: "http://my.netscape.com/rdf/simple/0.9/",
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
  dc: "http://purl.org/dc/elements/1.1/",
  dcterms: "http://purl.org/dc/terms/",
  content: "http://purl.org/rss/1.0/modules/content/",
  itunes: "http://www.itunes.com/dtds/podcast-1.0.dtd",
} as const;

// Apple's own examples spell the iTunes namespace with capitals; both are in the wild.
export const ITUNES: readonly string[] = [NS.itunes, "http://www.itunes.com/DTDs/PodCast-1.0.dtd"];

// Feeds use these prefixes without declaring them often enough (`<atom:link>` in a plain RSS
// feed, `<content:encoded>` with no xmlns) that an undeclared one is read as its usual namespace.
export const USUAL_PREFIXES: Readonly<Record<string, string>> = {
  atom: NS.atom10,
  dc: NS.dc,
  dcterms: NS.dcterms,
  content: NS.content,
  itunes: NS.itunes,
  rdf: NS.rdf,
};

// RSS 0.9x/2.0 elements have no namespace, RSS 1.0's and 0.90's have their own; some feeds
// also declare the RSS 1.0 or 2.0 namespace on an <rss> root. One list covers them all.
export const RSS_PLAIN: readonly string[] = [
  "",
  NS.rss10,
  NS.rss090,
  "http://backend.userland.com/rss2",
  "http://blogs.law.harvard.edu/tech/rss",
];
