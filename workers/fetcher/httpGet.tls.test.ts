import https from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireTool } from "@/lib/testing/requireTool";
import type { FetchError } from "./classify";
import { httpGet } from "./httpGet";
import { fixedResolver } from "./testing/servers";
import { selfSignedCert } from "./testing/tls";

const openssl = requireTool(
  "openssl",
  "the https tests (a self-signed certificate for feed.test)",
  "apt-get install openssl",
);

let pair: { key: Buffer; cert: Buffer } | undefined;
let server: https.Server;
let port = 0;

beforeAll(async () => {
  if (openssl.skip) return;
  // In CI a missing openssl fails here; an openssl that cannot make the certificate fails too.
  pair = selfSignedCert(openssl.need(), "feed.test");
  server = https.createServer(pair, (req, res) =>
    res.end(`sni=${(req.socket as { servername?: string }).servername}`),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
);

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return (err as FetchError).code;
  }
}

describe.skipIf(openssl.skip)(`https through the pinned address${openssl.note}`, () => {
  it("verifies the certificate against the host name, not the pinned IP (SNI kept)", async () => {
    const resolver = fixedResolver("127.0.0.1");
    const res = await httpGet(`https://feed.test:${port}/`, {
      allowPrivate: true,
      resolver,
      ca: pair?.cert,
    });
    expect(res.body.toString()).toBe("sni=feed.test");
    expect(resolver.calls).toEqual(["feed.test"]);
  });

  it("an untrusted certificate is `tls`", async () => {
    const resolver = fixedResolver("127.0.0.1");
    expect(
      await codeOf(httpGet(`https://feed.test:${port}/`, { allowPrivate: true, resolver })),
    ).toBe("tls");
  });

  it("a certificate for another name is `tls`", async () => {
    const resolver = fixedResolver("127.0.0.1");
    const code = await codeOf(
      httpGet(`https://other.test:${port}/`, { allowPrivate: true, resolver, ca: pair?.cert }),
    );
    expect(code).toBe("tls");
  });
});
