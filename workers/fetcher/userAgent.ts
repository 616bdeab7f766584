/** Our product token, as robots.txt groups name it. */
export const ROBOTS_AGENT = "wirewatch";
export const USER_AGENT = `${ROBOTS_AGENT}/0.1 (news ingestion; +https://github.com/wirewatch/wirewatch)`;
