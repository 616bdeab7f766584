import { NextRequest } from "next/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { proxy } from "@/proxy";
import { parseParam, parseQuery, refuseUndecodablePath } from "./respond";

describe("parseQuery", () => {
  const schema = z.strictObject({ q: z.string().optional() });
  it("refuses a parameter given twice, naming it", async () => {
    const parsed = parseQuery(new Request("http://x/api/items?q=a&q=b"), schema);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.response.status).toBe(400);
    expect(await parsed.response.json()).toEqual({
      error: { code: "bad_request", message: "q: given more than once" },
    });
  });
});

describe("parseParam", () => {
  it("names the path parameter in the 400", async () => {
    const parsed = parseParam("id", "x", z.string().regex(/^\d+$/, "must be digits"));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect((await parsed.response.json()).error.message).toBe("id: must be digits");
  });
});

describe("a path that does not percent-decode", () => {
  it("is a 400 in the error shape, from the proxy, before Next.js can answer a bare 500", async () => {
    for (const path of ["/api/sources/%ED%A0%80", "/api/items/%E0%A4%A", "/sources/%ED%A0%80"]) {
      expect(refuseUndecodablePath(path)?.status, path).toBe(400);
      const res = proxy(
        new NextRequest(`http://localhost:3000${path}`, { headers: { host: "localhost:3000" } }),
      );
      expect(res.status, path).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: "bad_request" } });
    }
    expect(refuseUndecodablePath("/api/sources/n%C3%BCrnberg%00")).toBeNull();
  });
});
