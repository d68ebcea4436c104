// Replayed signatures: the nonce (Plivo V3, Vobiz V2/V3), the timestamp+signature
// (Telnyx) or the JWT id (Vonage) of an accepted callback is remembered per configuration for the signature's
// window, and a repeat is refused with 403, even with another body (Vobiz signs no body). The carrier's own
// retry is signed afresh and still lands; Twilio signs nothing once-only, so its repeats are accepted and ignored.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { claimNonce, releaseNonce } from "../../src/telephony/nonces";
import { FAMILY_NONCE_RETENTION_MS } from "../../src/telephony/providers/plivo-family";
import { deliver, play, redeliver, runRow, setup, startCall } from "./support";

afterEach(() => clock.set(null));

describe("a replayed signature is refused", () => {
  it("vobiz: the headers of an accepted ringing callback carrying a hang-up body are a replay, and change nothing", async () => {
    const s = await setup("vobiz");
    const runId = await startCall(s);
    const cbs = (await play((await runRow(runId)).providerCallId!, "answered")).filter((c) => c.kind === "status");
    const [ring, hangup] = [cbs[0], cbs.at(-1)!];
    expect(new URLSearchParams(ring.body).get("CallStatus")).toBe("ringing");
    expect((await deliver(ring)).status).toBeLessThan(300);
    const before = await runRow(runId);
    expect(before.status).toBe("ringing");

    // Same URL, same (valid) signature and nonce, another body naming the same call: Vobiz signs only the URL.
    const forged = await deliver(ring, { body: hangup.body.replace(/CallStatus=[a-z-]+/, "CallStatus=busy") });
    expect(forged.status, forged.text).toBe(403);
    expect(forged.text).toContain("Replayed signature");
    // Only the V2 headers of the same delivery: the same nonce, so the same replay.
    const v2only = await deliver(ring, { headers: { "X-Vobiz-Signature-V3": null, "X-Vobiz-Signature-V3-Nonce": null }, body: hangup.body });
    expect(v2only.status, v2only.text).toBe(403);
    expect(await runRow(runId)).toEqual(before);

    // The genuine hang-up (its own nonce) lands.
    expect((await deliver(hangup)).status).toBeLessThan(300);
    expect((await runRow(runId)).status).toBe("completed");
  });

  it.each(["plivo", "telnyx", "vonage"] as const)(
    "%s: the same signed delivery twice is a replay; the carrier's re-signed retry is accepted",
    async (provider) => {
      const s = await setup(provider);
      const runId = await startCall(s);
      const callId = (await runRow(runId)).providerCallId!;
      const first = (await play(callId, "busy")).filter((c) => c.kind === "status")[0];
      expect((await deliver(first)).status).toBeLessThan(300);
      const before = await runRow(runId);
      const again = await deliver(first);
      expect(again.status, again.text).toBe(403);
      expect(JSON.parse(again.text)).toEqual({ detail: "Replayed signature: this callback was already received" });
      expect(await runRow(runId)).toEqual(before);
      const retry = await deliver(await redeliver(callId, first));
      expect(retry.status, retry.text).toBeLessThan(300);
    },
  );

  it("twilio signs nothing once-only: the same delivery twice is accepted and ignored", async () => {
    const s = await setup("twilio");
    const runId = await startCall(s);
    const final = (await play((await runRow(runId)).providerCallId!, "busy")).filter((c) => c.kind === "status").at(-1)!;
    expect((await deliver(final)).status).toBeLessThan(300);
    const done = await runRow(runId);
    expect((await deliver(final)).status).toBeLessThan(300);
    expect(await runRow(runId)).toEqual(done);
  });

  it("telnyx: another base64 spelling of the same signature is the same delivery", async () => {
    const s = await setup("telnyx");
    const runId = await startCall(s);
    const first = (await play((await runRow(runId)).providerCallId!, "busy")).filter((c) => c.kind === "status")[0];
    expect((await deliver(first)).status).toBeLessThan(300);
    const sig = first.headers["telnyx-signature-ed25519"];
    const urlSafe = sig.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect((await deliver(first, { headers: { "telnyx-signature-ed25519": urlSafe } })).status).toBe(403);
  });
});

describe("the nonce store", () => {
  const key = (nonce: string, expiresAtMs: number) => ({ scheme: "test", nonce, expiresAtMs });

  it("claims once per configuration and scheme, gives a nonce back, and forgets it after its window", async () => {
    const now = 1_900_000_000_000;
    clock.set(now);
    const n = `n-${crypto.randomUUID()}`;
    expect(await claimNonce(env, 1, key(n, now + 1000))).toBe(true);
    expect(await claimNonce(env, 1, key(n, now + 1000))).toBe(false);
    // Another configuration, or another scheme, is another namespace.
    expect(await claimNonce(env, 2, key(n, now + 1000))).toBe(true);
    expect(await claimNonce(env, 1, { scheme: "other", nonce: n, expiresAtMs: now + 1000 })).toBe(true);
    // Given back (the callback failed on our side): claimable again.
    await releaseNonce(env, 1, key(n, now + 1000));
    expect(await claimNonce(env, 1, key(n, now + 1000))).toBe(true);
    // Past its window the row is pruned and the nonce could be claimed again (the signature check refuses it by then).
    clock.set(now + 1001);
    expect(await claimNonce(env, 1, key(n, now + 5000))).toBe(true);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM callback_nonces WHERE expires_at < ?")
      .bind(now + 1001)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });

  it("keeps Plivo-family nonces for a day (their signatures carry no time)", async () => {
    const s = await setup("plivo");
    const runId = await startCall(s);
    const first = (await play((await runRow(runId)).providerCallId!, "busy")).filter((c) => c.kind === "status")[0];
    expect((await deliver(first)).status).toBeLessThan(300);
    clock.set(Date.now() + FAMILY_NONCE_RETENTION_MS - 60_000);
    expect((await deliver(first)).status).toBe(403);
  });
});
