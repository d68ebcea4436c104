// PUBLIC_BASE_URL written with a trailing slash: the URLs handed to the carrier and
// the URL its signature is checked over come from one normalized base, so Twilio, Plivo and Vobiz callbacks,
// the answer request included, are accepted end to end.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { Callback } from "../../src/dev/simulator/types";
import { CALLEE, callbackRequest, play, runRow, setup, simRequests, type Setup } from "./support";

const ORIGIN = "https://dial.example.com";

/** The Worker's fetch handler with PUBLIC_BASE_URL as an operator might write it. */
const withBase = (base: string) => (req: Request) => worker.fetch(req, { ...env, PUBLIC_BASE_URL: base }, createExecutionContext());

async function startCall(s: Setup, fetch: ReturnType<typeof withBase>): Promise<number> {
  const res = await fetch(
    new Request(`${ORIGIN}/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      method: "POST",
      headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" },
      body: JSON.stringify({ phone_number: CALLEE, initial_context: { first_name: "Ada" } }),
    }),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { workflow_run_id: number }).workflow_run_id;
}

async function deliver(cb: Callback, fetch: ReturnType<typeof withBase>) {
  const res = await fetch(callbackRequest(cb));
  return { status: res.status, text: await res.text() };
}

/** Every URL in the originate request that points at us. */
async function urlsHandedOver(s: Setup): Promise<string[]> {
  const bodies = (await simRequests(s.acct)).filter((r) => r.method === "POST").map((r) => decodeURIComponent(r.body));
  return bodies.flatMap((b) => b.match(/https?:\/\/dial\.example\.com[^"&\s]*/g) ?? []);
}

describe.each(["twilio", "plivo", "vobiz"] as const)("%s with PUBLIC_BASE_URL ending in a slash", (provider) => {
  it.each([`${ORIGIN}/`, `${ORIGIN}//`])("accepts the signed answer and status callbacks (base %s)", async (base) => {
    const fetch = withBase(base);
    const s = await setup(provider);
    const runId = await startCall(s, fetch);

    const handed = await urlsHandedOver(s);
    expect(handed.length).toBeGreaterThan(0);
    for (const u of handed) expect(u, "a callback URL handed to the carrier").toMatch(new RegExp(`^${ORIGIN}/api/v1/telephony/${provider}/`));

    const cbs = (await play((await runRow(runId)).providerCallId!, "answered")).filter((c) => c.kind !== "stream");
    expect(cbs.map((c) => c.kind)).toContain("answer");
    expect(cbs.map((c) => c.kind)).toContain("status");
    for (const cb of cbs) {
      const r = await deliver(cb, fetch);
      expect(r.status, `${cb.kind} ${cb.url}: ${r.text}`).toBeLessThan(300);
      if (cb.kind === "answer") expect(r.text).toContain("Hello Ada");
    }
    expect((await runRow(runId)).status).toBe("completed");
  });
});
