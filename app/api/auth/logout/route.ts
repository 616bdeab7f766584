import { logout } from "@/lib/auth/login";

export const dynamic = "force-dynamic";

/** See lib/auth/login.ts. */
export function POST(request: Request): Promise<Response> {
  return logout(request);
}
