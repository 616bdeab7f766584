/** The dashboard's pages, in the navigation's order (a plain module: e2e specs import it too). */
export const PAGES = [
  { href: "/", label: "Overview" },
  { href: "/sources", label: "Sources" },
  { href: "/queues", label: "Queues" },
  { href: "/read-path", label: "Read path" },
  { href: "/dead-letters", label: "Dead letters" },
  { href: "/stories", label: "Stories" },
  { href: "/items", label: "Items" },
  { href: "/dedup", label: "Dedup" },
  { href: "/meaning", label: "Meaning" },
  { href: "/costs", label: "Costs" },
  { href: "/repairs", label: "Repairs" },
  { href: "/audit", label: "Audit" },
] as const;
