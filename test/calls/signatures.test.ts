// Known-answer signature vectors: the adapters and the simulator must both
// reproduce them, and each verifier must refuse the near misses.
import { describe, expect, it } from "vitest";
import { twilioSignature } from "../../src/telephony/providers/twilio/calls";
import { plivoV3Base, plivoV3Signature } from "../../src/telephony/providers/plivo/calls";
import { vobizSignature, vobizCalls } from "../../src/telephony/providers/vobiz/calls";
import { verifyTelnyxSignature } from "../../src/telephony/providers/telnyx/calls";
import { importVonagePrivateKey, pkcs1ToPkcs8, verifyVonageSignedCallback, vonageJwt } from "../../src/telephony/providers/vonage/calls";
import { plivoCalls } from "../../src/telephony/providers/plivo/calls";
import { twilioCalls } from "../../src/telephony/providers/twilio/calls";
import * as sim from "../../src/dev/simulator/sign";
import type { ConfigContext } from "../../src/telephony/providers/types";

const ctx = (config: Record<string, unknown>): ConfigContext => ({ id: 1, orgId: 1, config, state: {}, activeNumbers: [] });
const formRequest = (url: string, body: string, headers: Record<string, string>) =>
  new Request(url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers }, body });

describe("B.1 Twilio", () => {
  const url = "https://hooks.example.test/tw/status?run=r1";
  const params: Array<[string, string]> = [
    ["CallSid", "CA00000000000000000000000000000001"],
    ["CallStatus", "completed"],
    ["CallDuration", "7"],
    ["AnsweredBy", "human"],
  ];
  const body = new URLSearchParams(params).toString();
  const expected = "kSiaVMVi1yHWGKDQL5GPEpUYHPg=";

  it("adapter and simulator reproduce the vector", async () => {
    expect(await twilioSignature("test_auth_token", url, params)).toBe(expected);
    expect(await sim.twilioSign("test_auth_token", url, params)).toBe(expected);
  });

  it("verifies on the exact URL (with or without the default port) and refuses near misses", async () => {
    const c = ctx({ auth_token: "test_auth_token" });
    expect(await twilioCalls.verifyCallback(c, formRequest(url, body, { "X-Twilio-Signature": expected }), body)).toBe(true);
    expect(
      await twilioCalls.verifyCallback(c, formRequest("https://hooks.example.test:443/tw/status?run=r1", body, { "X-Twilio-Signature": expected }), body),
    ).toBe(true);
    expect(await twilioCalls.verifyCallback(c, formRequest(url, body + "&x=1", { "X-Twilio-Signature": expected }), body + "&x=1")).toBe(false);
    expect(
      await twilioCalls.verifyCallback(c, formRequest("https://hooks.example.test/tw/status?run=r2", body, { "X-Twilio-Signature": expected }), body),
    ).toBe(false);
    expect(await twilioCalls.verifyCallback(ctx({ auth_token: "other" }), formRequest(url, body, { "X-Twilio-Signature": expected }), body)).toBe(false);
    expect(await twilioCalls.verifyCallback(c, formRequest(url, body, {}), body)).toBe(false);
  });
});

describe("B.2 Plivo V3", () => {
  const params: Array<[string, string]> = [
    ["CallUUID", "u-1"],
    ["CallStatus", "completed"],
    ["Duration", "7"],
  ];
  const body = new URLSearchParams(params).toString();
  const nonce = "12345678901234567890";
  const withQuery = "https://hooks.example.test/pl/hangup?run=r1";
  const noQuery = "https://hooks.example.test/pl/hangup";

  it("builds the documented base strings and reproduces both vectors", async () => {
    expect(plivoV3Base(withQuery, "POST", params)).toBe("https://hooks.example.test/pl/hangup?run=r1.CallStatuscompletedCallUUIDu-1Duration7");
    expect(plivoV3Base(noQuery, "POST", params)).toBe("https://hooks.example.test/pl/hangup?CallStatuscompletedCallUUIDu-1Duration7");
    expect(await plivoV3Signature("plivo_token", withQuery, "POST", params, nonce)).toBe("2gmt3Fw9r4EEofxUxYTyeq8TlYRxvE/1NLd3o2mQ9lc=");
    expect(await plivoV3Signature("plivo_token", noQuery, "POST", params, nonce)).toBe("1x8ap7HX49i5FkGh7KKj3kwfUSLXwbEeyQX0hyOEKYc=");
    expect(await sim.plivoV3Sign("plivo_token", withQuery, params, nonce)).toBe("2gmt3Fw9r4EEofxUxYTyeq8TlYRxvE/1NLd3o2mQ9lc=");
    expect(await sim.plivoV3Sign("plivo_token", noQuery, params, nonce)).toBe("1x8ap7HX49i5FkGh7KKj3kwfUSLXwbEeyQX0hyOEKYc=");
  });

  it("accepts any one of several comma-separated signatures; a missing nonce fails", async () => {
    const c = ctx({ auth_token: "plivo_token" });
    const good = "2gmt3Fw9r4EEofxUxYTyeq8TlYRxvE/1NLd3o2mQ9lc=";
    const req = (h: Record<string, string>) => formRequest(withQuery, body, h);
    expect(await plivoCalls.verifyCallback(c, req({ "X-Plivo-Signature-V3": `bogus,${good}`, "X-Plivo-Signature-V3-Nonce": nonce }), body)).toBe(true);
    expect(await plivoCalls.verifyCallback(c, req({ "X-Plivo-Signature-V3": good }), body)).toBe(false);
    expect(await plivoCalls.verifyCallback(c, req({ "X-Plivo-Signature-V3": "bogus", "X-Plivo-Signature-V3-Nonce": nonce }), body)).toBe(false);
    expect(await plivoCalls.verifyCallback(c, req({ "X-Plivo-Signature-V3": good, "X-Plivo-Signature-V3-Nonce": "1" + nonce.slice(1, -1) + "1" }), body)).toBe(
      false,
    );
  });
});

describe("B.3 Vobiz", () => {
  const url = "https://hooks.example.test/vb/hangup?ignored=yes";
  const nonce = "09876543210987654321";
  it("reproduces V3 and V2 over the query-less URL", async () => {
    expect(await vobizSignature("V3", "vobiz_token", url, nonce)).toBe("0yKEeJXTn5KzeMSXNn3gZU6sekI7vzkT93bI0zNysHk=");
    expect(await vobizSignature("V2", "vobiz_token", url, nonce)).toBe("hKLMweUUD3lSoHPS3cJS514G2KCPQFSy9ngM3Rr/ePY=");
    expect(await sim.vobizSign("V3", "vobiz_token", url, nonce)).toBe("0yKEeJXTn5KzeMSXNn3gZU6sekI7vzkT93bI0zNysHk=");
    expect(await sim.vobizSign("V2", "vobiz_token", url, nonce)).toBe("hKLMweUUD3lSoHPS3cJS514G2KCPQFSy9ngM3Rr/ePY=");
  });
  it("prefers V3 and falls back to V2", async () => {
    const c = ctx({ auth_token: "vobiz_token" });
    const v2only = formRequest(url, "", { "X-Vobiz-Signature-V2": "hKLMweUUD3lSoHPS3cJS514G2KCPQFSy9ngM3Rr/ePY=", "X-Vobiz-Signature-V2-Nonce": nonce });
    expect(await vobizCalls.verifyCallback(c, v2only, "")).toBe(true);
    const badV3 = formRequest(url, "", {
      "X-Vobiz-Signature-V3": "AAAA",
      "X-Vobiz-Signature-V3-Nonce": nonce,
      "X-Vobiz-Signature-V2": "hKLMweUUD3lSoHPS3cJS514G2KCPQFSy9ngM3Rr/ePY=",
      "X-Vobiz-Signature-V2-Nonce": nonce,
    });
    expect(await vobizCalls.verifyCallback(c, badV3, "")).toBe(false);
  });
});

describe("B.4 Telnyx", () => {
  const pub = "iojj3XQJ8ZX9UtstPLpdcspnCb8dlBIb83SIAbQPb1w=";
  const body = '{"data":{"event_type":"call.hangup","payload":{"call_control_id":"v3:abc","hangup_cause":"user_busy"}}}';
  const sig = "ly8Z0KwZLgZtFPYrBipHPIRSd44yt1HzUhReAccMGOyS26uX8Yb8G53PskYhaj/sYwmGhDJSTEvXHgb521xuBA==";
  const now = 1_700_000_000_000;

  it("verifies the vector with the clock injected", async () => {
    expect(await verifyTelnyxSignature(pub, "1700000000", sig, body, now)).toBe(true);
  });

  it("the simulator's signer produces the same signature from the seed", async () => {
    // PKCS#8 for an Ed25519 seed: a fixed 16-byte prefix, then the 32 seed bytes.
    const prefix = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
    const key = await crypto.subtle.importKey("pkcs8", Uint8Array.from([...prefix, ...new Array(32).fill(1)]), { name: "Ed25519" }, false, ["sign"]);
    expect(await sim.telnyxSign(key, "1700000000", body)).toBe(sig);
  });

  it("refuses a stale or future timestamp, a flipped body byte, bad base64 and a wrong key", async () => {
    expect(await verifyTelnyxSignature(pub, "1700000000", sig, body, now + 301_000)).toBe(false);
    expect(await verifyTelnyxSignature(pub, "1700000000", sig, body, now - 301_000)).toBe(false);
    expect(await verifyTelnyxSignature(pub, "1700000000", sig, body, now + 299_000)).toBe(true);
    expect(await verifyTelnyxSignature(pub, "1700000000", sig, body.replace("user_busy", "user_bust"), now)).toBe(false);
    expect(await verifyTelnyxSignature(pub, "1700000001", sig, body, now)).toBe(false);
    expect(await verifyTelnyxSignature(pub, "1700000000", "not base64!!", body, now)).toBe(false);
    expect(await verifyTelnyxSignature(pub, "1700000000", null, body, now)).toBe(false);
    expect(await verifyTelnyxSignature("AAAA", "1700000000", sig, body, now)).toBe(false);
  });
});

describe("B.5 Vonage signed callbacks", () => {
  const body = '{"uuid":"c-1","status":"completed","duration":"7"}';
  const jwt =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3MDAwMDAwMDAsImp0aSI6InQtMSIsImlzcyI6IlZvbmFnZSIsImFwaV9rZXkiOiJhYmMxMjMiLCJhcHBsaWNhdGlvbl9pZCI6ImFwcC0xIiwicGF5bG9hZF9oYXNoIjoiY2IwYThmYjc5ZGM0YjFhN2Y4N2JhMjM1ZmEyNTRkZGRmNmE0ZGQ0ODBhMGMxYTYyNTM0MjlmYjU5M2ZlOWNhZiJ9.e23z7NeH41FiNRpNZeEV0HtrqLdlUdPAmx_yPnxB-uk";
  const opts = { authorization: `Bearer ${jwt}`, rawBody: body, secret: "sig_secret", apiKey: "abc123", nowMs: 1_700_000_000_000 };

  it("verifies the vector and the simulator reproduces it", async () => {
    expect(await verifyVonageSignedCallback(opts)).toBe(true);
    const minted = await sim.vonageCallbackJwt("sig_secret", { iat: 1700000000, jti: "t-1", iss: "Vonage", api_key: "abc123", application_id: "app-1" }, body);
    expect(minted).toBe(jwt);
  });

  it("refuses a payload_hash mismatch, another api_key, another secret, an old iat and a missing token", async () => {
    expect(await verifyVonageSignedCallback({ ...opts, rawBody: body.replace("7", "8") })).toBe(false);
    expect(await verifyVonageSignedCallback({ ...opts, apiKey: "zzz999" })).toBe(false);
    expect(await verifyVonageSignedCallback({ ...opts, secret: "other" })).toBe(false);
    expect(await verifyVonageSignedCallback({ ...opts, nowMs: opts.nowMs + 301_000 })).toBe(false);
    expect(await verifyVonageSignedCallback({ ...opts, authorization: null })).toBe(false);
    expect(await verifyVonageSignedCallback({ ...opts, authorization: `Bearer ${jwt.slice(0, -2)}xx` })).toBe(false);
  });

  it("holds iat to 300 s either way, and exp / nbf (when present) to 60 s of skew", async () => {
    const at = (s: number) => ({ ...opts, nowMs: opts.nowMs + s * 1000 });
    expect(await verifyVonageSignedCallback(at(300))).toBe(true);
    expect(await verifyVonageSignedCallback(at(301))).toBe(false);
    expect(await verifyVonageSignedCallback(at(-300))).toBe(true);
    expect(await verifyVonageSignedCallback(at(-301))).toBe(false);
    const signed = async (claims: Record<string, unknown>) => ({
      ...opts,
      authorization: `Bearer ${await sim.vonageCallbackJwt("sig_secret", { iat: 1700000000, jti: "t-2", iss: "Vonage", api_key: "abc123", ...claims }, body)}`,
    });
    const exp = await signed({ exp: 1700000100 });
    expect(await verifyVonageSignedCallback({ ...exp, nowMs: 1_700_000_160_000 })).toBe(true);
    expect(await verifyVonageSignedCallback({ ...exp, nowMs: 1_700_000_161_000 })).toBe(false);
    expect(await verifyVonageSignedCallback(await signed({ exp: "never" }))).toBe(false);
    expect(await verifyVonageSignedCallback(await signed({ nbf: 1700000060 }))).toBe(true);
    expect(await verifyVonageSignedCallback(await signed({ nbf: 1700000061 }))).toBe(false);
  });
});

describe("Vonage RS256 application JWT", () => {
  it("mints a token the public half verifies, from a PKCS#8 or a PKCS#1 PEM", async () => {
    const { pair, pkcs8 } = await sim.rsaKeyPair();
    // PKCS#1 is the OCTET STRING inside PKCS#8 (26-byte header for a 2048-bit key); wrapping it back must round-trip.
    const pkcs1 = pkcs8.slice(26);
    expect(pkcs1ToPkcs8(pkcs1)).toEqual(pkcs8);
    for (const pem of [sim.pem("PRIVATE KEY", pkcs8), sim.pem("RSA PRIVATE KEY", pkcs1)]) {
      await importVonagePrivateKey(pem);
      const jwt = await vonageJwt("app-1", pem, 1_700_000_000_000);
      const claims = await sim.verifyRs256(jwt, pair.publicKey);
      expect(claims).toMatchObject({ application_id: "app-1", iat: 1700000000, exp: 1700000900, jti: expect.any(String) });
    }
  });
});

// The carriers' own SDKs (devDependencies, loaded in workerd) sign and verify the same bytes our adapters do.
describe("the carriers' SDKs agree with the adapters", () => {
  it("twilio: getExpectedTwilioSignature equals ours (B.1 and a query-less URL), validateRequest accepts our signature", async () => {
    const { getExpectedTwilioSignature, validateRequest } = await import("twilio/lib/webhooks/webhooks");
    const url = "https://hooks.example.test/tw/status?run=r1";
    const params = { CallSid: "CA00000000000000000000000000000001", CallStatus: "completed", CallDuration: "7", AnsweredBy: "human" };
    expect(getExpectedTwilioSignature("test_auth_token", url, params)).toBe("kSiaVMVi1yHWGKDQL5GPEpUYHPg=");
    const other = "https://edgedial.example/api/v1/telephony/twilio/status/42/abc";
    const ours = await twilioSignature("tok", other, Object.entries(params));
    expect(getExpectedTwilioSignature("tok", other, params)).toBe(ours);
    expect(validateRequest("tok", ours, other, params)).toBe(true);
    expect(validateRequest("tok", ours, other, { ...params, CallStatus: "busy" })).toBe(false);
  });

  it("plivo: validateV3Signature accepts our V3 signatures (with and without a query); its published V2 vector is Vobiz's V2 formula", async () => {
    const { validateV3Signature } = await import("plivo/dist/utils/v3Security");
    const { validateSignature } = await import("plivo/dist/utils/security");
    const params = { CallUUID: "u-1", CallStatus: "completed", Duration: "7" };
    for (const url of ["https://hooks.example.test/pl/hangup?run=r1", "https://hooks.example.test/pl/hangup"]) {
      const sig = await plivoV3Signature("plivo_token", url, "POST", Object.entries(params), "12345678901234567890");
      expect(validateV3Signature("POST", url, "12345678901234567890", "plivo_token", sig, params)).toBe(true);
      expect(validateV3Signature("POST", url, "12345678901234567890", "plivo_token", sig, { ...params, CallStatus: "busy" })).toBe(false);
    }
    // Published in Plivo's SDK tests (plivo-ruby spec/signature_spec.rb, plivo-dotnet TestSignature): V2 = HMAC-SHA256(token, URL + nonce).
    expect(validateSignature("https://answer.url", "12345", "ehV3IKhLysWBxC1sy8INm0qGoQYdYsHwuoKjsX7FsXc=", "my_auth_token")).toBe(true);
    expect(
      sim.b64(
        await crypto.subtle.sign(
          "HMAC",
          await crypto.subtle.importKey("raw", new TextEncoder().encode("my_auth_token"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
          new TextEncoder().encode("https://answer.url12345"),
        ),
      ),
    ).toBe("ehV3IKhLysWBxC1sy8INm0qGoQYdYsHwuoKjsX7FsXc=");
    // Vobiz V2 is that formula over the query-less callback URL; the SDK agrees with ours on a real callback URL.
    const cb = "https://edgedial.example/api/v1/telephony/vobiz/status/42/abc";
    expect(validateSignature(cb, "12345", await vobizSignature("V2", "my_auth_token", `${cb}?x=1`, "12345"), "my_auth_token")).toBe(true);
  });
});
