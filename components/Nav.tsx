"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

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

export function Nav() {
  const path = usePathname();
  return (
    <nav className="site-nav" aria-label="Dashboard">
      {PAGES.map((p) => {
        const current = p.href === "/" ? path === "/" : path.startsWith(p.href);
        return (
          <Link
            key={p.href}
            className="nav-link"
            href={p.href}
            aria-current={current ? "page" : undefined}
          >
            {p.label}
          </Link>
        );
      })}
    </nav>
  );
}
