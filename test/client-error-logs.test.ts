// Client errors (every 4xx) are logged as one info line without a stack; expected refusals of the campaign object
// come back over RPC as values, so the runtime does not report them as uncaught exceptions.
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { call } from "./helpers";
import { draftCampaign, setupOrg } from "./campaigns/support";
import { resetWorld } from "./campaigns/engine-harness";

type Spy = { mock: { calls: unknown[][] }; mockClear(): void };
let spies: Record<"error" | "warn" | "info" | "log", Spy>;
beforeEach(() => {
  resetWorld();
  spies = {
    error: vi.spyOn(console, "error").mockImplementation(() => undefined),
    warn: vi.spyOn(console, "warn").mockImplementation(() => undefined),
    info: vi.spyOn(console, "info").mockImplementation(() => undefined),
    log: vi.spyOn(console, "log").mockImplementation(() => undefined),
  };
});
afterEach(() => vi.restoreAllMocks());

const lines = (spy: Spy): string[] => spy.mock.calls.map((args) => args.map(String).join(" "));
type Logged = { event?: string; status: number; errors: { loc: string }[] } & Record<string, unknown>;
const clientErrorLines = (): Logged[] =>
  lines(spies.info)
    .map((l) => JSON.parse(l) as Logged)
    .filter((l) => l.event === "client_error");

describe("client errors in the logs", () => {
  it("an expected 409 is one info line, no stack, nothing at error or warning level", async () => {
    const o = await setupOrg();
    const { id } = await draftCampaign(o, 1, "logs");
    for (const s of Object.values(spies)) s.mockClear();

    const res = await call("POST", `/api/v1/campaign/${id}/pause`, { key: o.org.key });
    expect(res.status, `${res.text} ${lines(spies.error)}`).toBe(409);
    expect(res.json).toEqual({ detail: "Cannot pause a campaign in state 'draft'" });

    expect(lines(spies.error)).toEqual([]);
    expect(lines(spies.warn)).toEqual([]);
    const logged = clientErrorLines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: "info",
      status: 409,
      method: "POST",
      path: `/api/v1/campaign/${id}/pause`,
      detail: "Cannot pause a campaign in state 'draft'",
    });
    expect(JSON.stringify(logged[0])).not.toMatch(/stack|\n\s+at /);
  });

  it("the campaign object answers a refused operation with a value, not an exception thrown across RPC", async () => {
    const o = await setupOrg();
    const { id } = await draftCampaign(o, 1, "logs");
    const raw = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));
    expect(await raw.pause()).toEqual({ ok: false, status: 409, detail: "Cannot pause a campaign in state 'draft'" });
  });

  it("a 422 names the refused fields and types, never the rejected values", async () => {
    const o = await setupOrg();
    for (const s of Object.values(spies)) s.mockClear();
    const secret = "do-not-log-this-value";
    const res = await call("POST", "/api/v1/organizations/telephony-configs", {
      key: o.org.key,
      body: { name: 5, config: { provider: "ari", ari_endpoint: secret, app_name: "x", app_password: secret } },
    });
    expect(res.status).toBe(422);
    expect(lines(spies.error)).toEqual([]);
    const logged = clientErrorLines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "info", status: 422 });
    expect(logged[0].errors.map((e: { loc: string }) => e.loc)).toContain("body.name");
    expect(JSON.stringify(logged[0])).not.toContain(secret);
  });

  it("malformed JSON and an unsupported media type are client errors too", async () => {
    const o = await setupOrg();
    for (const s of Object.values(spies)) s.mockClear();
    expect((await call("POST", "/api/v1/organizations/api-keys", { key: o.org.key, raw: "{" })).status).toBe(422);
    expect((await call("POST", "/api/v1/organizations/api-keys", { key: o.org.key, raw: "x", headers: { "Content-Type": "text/plain" } })).status).toBe(415);
    expect(lines(spies.error)).toEqual([]);
    expect(clientErrorLines().map((l) => l.status)).toEqual([422, 415]);
  });
});
