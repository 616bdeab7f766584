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

// RSS 0.9x/2.0 elements have no namespace, RSS 1.0's and 0.90's have their own; some feeds
// also declare the RSS 1.0 or 2.0 namespace on an <rss> root. One list covers them all.
export const RSS_PLAIN: readonly string[] = [
  "",
  NS.rss10,
  NS.rss090,
  "http://backend.userland.com/rss2",
  "http://blogs.law.harvard.edu/tech/rss",
];
