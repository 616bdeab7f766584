import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "./server";
import { HUB_CHECK_MS } from "./websub";

// The hub on its own, against a callback that does what each test says.
let sim: Simulator;
let callback: Server;
let callbackUrl: string;
let echo: (challenge: string) => string = (c) => c;
const pushes: { signature: string | undefined; body: string }[] = [];

beforeAll(async () => {
  sim = await startSimulator({ manual: true, websubHub: true, ratePerMinute: 0, burstEveryMs: 0 });
  callback = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET")
      return void res.end(echo(url.searchParams.get("hub.challenge") ?? ""));
    let body = "";
    for await (const chunk of req) body += chunk;
    pushes.push({ signature: req.headers["x-hub-signature"] as string | undefined, body });
    res.end();
  });
  await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/cb`;
});
afterAll(async () => {
  await sim?.stop();
  await new Promise((r) => callback?.close(r));
});

const topic = () => `${sim.url}/s/harbour-rss/feed.xml`;
const subscribe = (form: Record<string, string>) =>
  fetch(`${sim.url}/hub`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });

describe("the simulator's WebSub hub", () => {
  it("names itself in every feed's Link header", async () => {
    const res = await fetch(topic());
    expect(res.headers.get("link")).toBe(`<${sim.url}/hub>; rel="hub", <${topic()}>; rel="self"`);
  });

  it("refuses bad requests and unknown topics", async () => {
    expect(
      (await subscribe({ "hub.mode": "follow", "hub.topic": topic(), "hub.callback": callbackUrl }))
        .status,
    ).toBe(400);
    expect(
      (
        await subscribe({
          "hub.mode": "subscribe",
          "hub.topic": topic(),
          "hub.callback": "ftp://x",
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await subscribe({
          "hub.mode": "subscribe",
          "hub.topic": `${sim.url}/nope`,
          "hub.callback": callbackUrl,
        })
      ).status,
    ).toBe(404);
  });

  it("keeps no subscription whose callback does not echo the challenge", async () => {
    echo = () => "something else";
    expect(
      (
        await subscribe({
          "hub.mode": "subscribe",
          "hub.topic": topic(),
          "hub.callback": callbackUrl,
        })
      ).status,
    ).toBe(202);
    await sim.websub?.settled();
    expect(sim.websub?.subscriptions()).toEqual([]);
    expect(sim.websub?.stats.verificationsFailed).toBe(1);
    echo = (c) => c;
  });

  it("pushes signed changes until the lease runs out (simulated time)", async () => {
    const form = {
      "hub.mode": "subscribe",
      "hub.topic": topic(),
      "hub.callback": callbackUrl,
      "hub.lease_seconds": "120",
      "hub.secret": "s3cret",
    };
    expect((await subscribe(form)).status).toBe(202);
    await sim.websub?.settled();
    expect(sim.websub?.subscriptions()).toHaveLength(1);

    sim.control.advance(1_000);
    sim.control.publish({ outlet: "harbour", title: "Within the lease" });
    sim.control.advance(HUB_CHECK_MS);
    await sim.websub?.settled();
    expect(pushes).toHaveLength(1);
    expect(pushes[0]?.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(pushes[0]?.body).toContain("Within the lease");

    sim.control.advance(120_000);
    sim.control.publish({ outlet: "harbour", title: "After the lease" });
    sim.control.advance(HUB_CHECK_MS);
    await sim.websub?.settled();
    expect(pushes).toHaveLength(1);
    expect(sim.websub?.subscriptions()).toEqual([]);
    expect(sim.websub?.stats.expired).toBe(1);
  });
});
