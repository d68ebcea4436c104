// GET /campaign/{id}/events: a WebSocket the campaign's object accepts (hibernation API) that sends the progress at
// once and again after every change; API keys as a header or, from a browser, as a subprotocol.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { resetWorld, tick } from "./engine-harness";
import { seedCampaign, setupOrg } from "./support";

type Watcher = { ws: WebSocket; messages: any[]; next(test: (m: any) => boolean): Promise<any> };

async function watch(id: number, headers: Record<string, string>): Promise<{ res: Response; watcher: Watcher | null }> {
  const res = await exports.default.fetch(new Request(`http://edgedial.test/api/v1/campaign/${id}/events`, { headers: { Upgrade: "websocket", ...headers } }));
  const ws = res.webSocket;
  if (!ws) return { res, watcher: null };
  ws.accept();
  const messages: any[] = [];
  const waiters: Array<() => void> = [];
  ws.addEventListener("message", (e) => {
    messages.push(JSON.parse(e.data as string));
    for (const w of waiters.splice(0)) w();
  });
  const next = async (test: (m: any) => boolean) => {
    for (let i = 0; i < 100; i++) {
      const m = messages.find(test);
      if (m) return m;
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 50);
      });
    }
    throw new Error(`no such message in ${JSON.stringify(messages.map((m) => m.data?.state))}`);
  };
  return { res, watcher: { ws, messages, next } };
}

describe("a campaign's pushed progress", () => {
  it("sends the progress on connect and after each change; the counts add up; identical snapshots are not repeated", async () => {
    const carrier = resetWorld();
    const o = await setupOrg();
    const { id, stub } = await seedCampaign(o, { n: 3 });
    const { res, watcher } = await watch(id, { "X-API-Key": o.org.key });
    expect(res.status).toBe(101);
    const first = await watcher!.next((m) => m.type === "progress");
    expect(first.data).toMatchObject({ campaign_id: id, state: "draft", total: 3, pending: 3 });

    await stub.start();
    await tick(stub);
    const running = await watcher!.next((m) => m.data.state === "running" && m.data.in_progress === 3);
    expect(running.data.pending).toBe(0);
    const [a] = carrier.open(id);
    await carrier.report(a, "busy");
    const after = await watcher!.next((m) => m.data.failed_calls === 1);
    // Every contact is counted somewhere: not yet called, waiting for a retry, in progress, reached or not.
    const d = after.data;
    expect(d.pending + d.retry_waiting + d.in_progress + d.completed + d.answered_no_conversation + d.failed).toBe(d.total);
    expect(d.retry_waiting).toBe(1);
    const sent = watcher!.messages.length;
    await stub.wake();
    await new Promise((r) => setTimeout(r, 50));
    expect(watcher!.messages.length).toBe(sent);

    watcher!.ws.send("ping");
    await watcher!.next((m) => m.type === "pong");
    watcher!.ws.close(1000, "done");
  });

  it("takes the key as a subprotocol (browsers); refuses a plain GET (426), no key (401) and another organization (404)", async () => {
    resetWorld();
    const o = await setupOrg();
    const { id } = await seedCampaign(o, { n: 1 });
    const browser = await watch(id, { "Sec-WebSocket-Protocol": `edgedial.events, ${o.org.key}` });
    expect(browser.res.status).toBe(101);
    expect(browser.res.headers.get("Sec-WebSocket-Protocol")).toBe("edgedial.events");
    await browser.watcher!.next((m) => m.type === "progress");
    browser.watcher!.ws.close(1000);

    expect((await call("GET", `/api/v1/campaign/${id}/events`, { key: o.org.key })).status).toBe(426);
    expect((await watch(id, {})).res.status).toBe(401);
    expect((await watch(id, { "Sec-WebSocket-Protocol": "edgedial.events, edk_wrong" })).res.status).toBe(401);
    const other = await setupOrg();
    expect((await watch(id, { "X-API-Key": other.org.key })).res.status).toBe(404);
  });
});
