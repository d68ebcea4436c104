// Deleting a configuration while a call on it is in flight: refused with 409 naming the calls, so the
// carrier's later callbacks still verify, the run reaches its final status and frees its slot; then it deletes.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { organizationStub } from "../../src/organizations/organization-object";
import { call } from "../helpers";
import { deliverAll, play, runRow, setup, startCall } from "../calls/support";

const CONFIGS = "/api/v1/organizations/telephony-configs";

describe("DELETE a telephony configuration with calls in progress", () => {
  it("is a 409 naming the live calls; after their final status the slot is free and the delete succeeds", async () => {
    const s = await setup("twilio");
    const runId = await startCall(s);
    const other = await startCall(s);
    expect((await organizationStub(env, s.org.id).usage()).inUse).toBe(2);

    const refused = await call("DELETE", `${CONFIGS}/${s.configId}`, { key: s.org.key });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.detail).toBe(
      `Telephony configuration has calls in progress: WR-${runId} (id ${runId}), WR-${other} (id ${other}); delete it once they have ended`,
    );
    // Nothing was removed: the configuration and its numbers are intact.
    const kept = await call("GET", `${CONFIGS}/${s.configId}`, { key: s.org.key });
    expect(kept.status).toBe(200);
    expect(kept.json.credentials.from_numbers).toHaveLength(1);

    // The carrier's callbacks still verify against the configuration; the calls end and free their slots.
    await deliverAll(await play((await runRow(runId)).providerCallId!, "answered"));
    expect((await runRow(runId)).status).toBe("completed");
    const still = await call("DELETE", `${CONFIGS}/${s.configId}`, { key: s.org.key });
    expect(still.status).toBe(409);
    expect(still.json.detail).toMatch(new RegExp(`^Telephony configuration has calls in progress: WR-${other} \\(id ${other}\\);`));
    await deliverAll(await play((await runRow(other)).providerCallId!, "busy"));
    expect((await organizationStub(env, s.org.id).usage()).inUse).toBe(0);

    const deleted = await call("DELETE", `${CONFIGS}/${s.configId}`, { key: s.org.key });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.json).toEqual({ id: s.configId, deleted: true });
  });

  it("names at most five calls and counts the rest", async () => {
    const s = await setup("twilio");
    const ids = [];
    for (let i = 0; i < 7; i++) ids.push(await startCall(s));
    const refused = await call("DELETE", `${CONFIGS}/${s.configId}`, { key: s.org.key });
    expect(refused.status).toBe(409);
    const named = ids
      .slice(0, 5)
      .map((id) => `WR-${id} (id ${id})`)
      .join(", ");
    expect(refused.json.detail).toBe(`Telephony configuration has calls in progress: ${named} and 2 more; delete it once they have ended`);
  });

  it("a queued run (a call being started) blocks the delete too", async () => {
    const s = await setup("twilio");
    const runId = await startCall(s);
    await env.DB.prepare("UPDATE workflow_runs SET status = 'queued' WHERE id = ?").bind(runId).run();
    expect((await call("DELETE", `${CONFIGS}/${s.configId}`, { key: s.org.key })).status).toBe(409);
  });
});
