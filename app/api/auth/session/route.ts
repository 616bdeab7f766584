import { session } from "@/lib/auth/login";

export const dynamic = "force-dynamic";

/** Whether this browser is logged in and whether admin actions are available (and why not). */
export function GET(request: Request): Promise<Response> {
  return session(request);
}
