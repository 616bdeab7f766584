/** Only http(s) links are ever put in an href: anything else (javascript:, data:) is no link. */
export const httpLink = (link: string | null): string | null =>
  link && /^https?:\/\//i.test(link) ? link : null;
