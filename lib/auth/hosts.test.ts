import { describe, expect, it } from "vitest";
import { hostName, refuseForeignHost } from "./hosts";

const settings = {
  WIREWATCH_URL: "https://news.example.org/",
  WIREWATCH_ALLOWED_HOSTS: ["ops.internal"],
};
const to = (host?: string, url = "http://localhost/api/sources") =>
  new Request(url, host === undefined ? {} : { headers: { host } });

describe("refuseForeignHost", () => {
  it("answers loopback names on any port, WIREWATCH_URL's host and the allowed list", () => {
    for (const host of [
      "localhost",
      "localhost:3000",
      "127.0.0.1:3100",
      "[::1]:3000",
      "LOCALHOST:3000",
      "news.example.org",
      "news.example.org:443",
      "ops.internal:8080",
    ]) {
      expect(refuseForeignHost(to(host), settings), host).toBeNull();
    }
  });

  it("answers the WebSub callback's host, which hubs verify and push to", () => {
    const withCallback = {
      ...settings,
      WIREWATCH_WEBSUB_CALLBACK_URL: "https://push.example.net/base",
    };
    expect(refuseForeignHost(to("push.example.net"), withCallback)).toBeNull();
    expect(refuseForeignHost(to("push.example.net"), settings)?.status).toBe(421);
  });

  it("refuses any other host with 421 in the error shape", async () => {
    for (const host of [
      "evil.example",
      "evil.example:3000",
      "localhost.evil.example",
      "127.0.0.1.nip.io",
      "news.example.org.evil.example",
      "user@localhost",
      "localhost/x",
      "",
    ]) {
      const res = refuseForeignHost(to(host), settings);
      expect(res?.status, host).toBe(421);
      expect(await res?.json()).toMatchObject({ error: { code: "unknown_host" } });
    }
    // Without a Host header (a request built by hand), the URL's host decides.
    expect(refuseForeignHost(to(undefined, "http://evil.example/"), settings)?.status).toBe(421);
    expect(refuseForeignHost(to(undefined), settings)).toBeNull();
  });

  it("reads a Host header's name", () => {
    expect(hostName("[::1]:3000")).toBe("[::1]");
    expect(hostName("Example.ORG.:80")).toBe("example.org");
    expect(hostName("a b")).toBeNull();
  });
});
