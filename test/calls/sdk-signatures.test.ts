// Telnyx and Vonage signatures checked against the carriers' own SDKs (telnyx's TelnyxWebhook, @vonage/jwt): what the
// carrier simulator signs (as the carriers document it) the SDKs accept, what our verifiers accept the SDKs accept
// too, and a tampered delivery is refused by both.
// The package refuses to load under the "browser" condition workerd resolves; its ES build runs here (nodejs_compat).
import { tokenGenerate } from "../../node_modules/@vonage/jwt/dist/esm/tokenGenerate.mjs";
import { verifySignature } from "../../node_modules/@vonage/jwt/dist/esm/verifySignature.mjs";
import { TelnyxWebhook } from "telnyx/lib/webhooks.mjs";
import { describe, expect, it } from "vitest";
import * as sim from "../../src/dev/simulator/sign";
import { verifyTelnyxSignature } from "../../src/telephony/providers/telnyx/calls";
import { importVonagePrivateKey, verifyVonageSignedCallback, vonageJwt } from "../../src/telephony/providers/vonage/calls";

const b64 = (bytes: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(bytes)));

async function telnyxKeys() {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  return { privateKey: pair.privateKey, publicB64: b64((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer) };
}

async function sdkAccepts(publicB64: string, body: string, headers: Record<string, string>): Promise<boolean> {
  try {
    await new TelnyxWebhook(publicB64).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

describe("Telnyx webhooks and the telnyx SDK", () => {
  const body = '{"data":{"event_type":"call.answered","payload":{"call_control_id":"v3:abc"}}}';

  it("a delivery signed as Telnyx documents it is accepted by the SDK and by our verifier; a changed byte by neither", async () => {
    const { privateKey, publicB64 } = await telnyxKeys();
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = await sim.telnyxSign(privateKey, ts, body);
    const headers = { "telnyx-signature-ed25519": sig, "telnyx-timestamp": ts };
    expect(await sdkAccepts(publicB64, body, headers)).toBe(true);
    expect(await verifyTelnyxSignature(publicB64, ts, sig, body, Date.now())).toBe(true);

    const tampered = body.replace("answered", "hangup");
    expect(await sdkAccepts(publicB64, tampered, headers)).toBe(false);
    expect(await verifyTelnyxSignature(publicB64, ts, sig, tampered, Date.now())).toBe(false);
  });

  it("the SDK and our verifier agree on the timestamp window and on another account's key", async () => {
    const { privateKey, publicB64 } = await telnyxKeys();
    const other = await telnyxKeys();
    const old = String(Math.floor(Date.now() / 1000) - 3600);
    const oldSig = await sim.telnyxSign(privateKey, old, body);
    expect(await sdkAccepts(publicB64, body, { "telnyx-signature-ed25519": oldSig, "telnyx-timestamp": old })).toBe(false);
    expect(await verifyTelnyxSignature(publicB64, old, oldSig, body, Date.now())).toBe(false);

    const ts = String(Math.floor(Date.now() / 1000));
    const sig = await sim.telnyxSign(privateKey, ts, body);
    expect(await sdkAccepts(other.publicB64, body, { "telnyx-signature-ed25519": sig, "telnyx-timestamp": ts })).toBe(false);
    expect(await verifyTelnyxSignature(other.publicB64, ts, sig, body, Date.now())).toBe(false);
  });
});

describe("Vonage JWTs and @vonage/jwt", () => {
  const body = '{"uuid":"c-1","status":"completed","duration":"7"}';
  const secret = "sig_secret_0123456789";

  it("a signed callback (HS256 with payload_hash) verifies with @vonage/jwt's verifySignature and with ours; the wrong secret with neither", async () => {
    const iat = Math.floor(Date.now() / 1000);
    const jwt = await sim.vonageCallbackJwt(
      secret,
      { iat, jti: crypto.randomUUID(), iss: "Vonage", api_key: "a1b2c3d4", application_id: "aaaaaaaa-0000-4000-8000-000000000001" },
      body,
    );
    expect(verifySignature(jwt, secret)).toBe(true);
    expect(await verifyVonageSignedCallback({ authorization: `Bearer ${jwt}`, rawBody: body, secret, apiKey: "a1b2c3d4" })).toBe(true);
    expect(verifySignature(jwt, "another_secret_0123456")).toBe(false);
    expect(await verifyVonageSignedCallback({ authorization: `Bearer ${jwt}`, rawBody: body, secret: "another_secret_0123456", apiKey: "a1b2c3d4" })).toBe(
      false,
    );
    // The SDK checks the signature only; the body hash is ours to check: a changed body is refused.
    expect(await verifyVonageSignedCallback({ authorization: `Bearer ${jwt}`, rawBody: body.replace("7", "8"), secret, apiKey: "a1b2c3d4" })).toBe(false);
  });

  it("our application JWT has the claims and signature @vonage/jwt's tokenGenerate makes (RS256, application_id, iat, jti, exp = iat + 900)", async () => {
    const { pair, pkcs8 } = await sim.rsaKeyPair();
    const pem = sim.pem("PRIVATE KEY", pkcs8);
    const appId = "aaaaaaaa-0000-4000-8000-000000000001";
    const theirs = tokenGenerate(appId, pem);
    const ours = await vonageJwt(appId, pem);
    const decode = (t: string) =>
      t
        .split(".")
        .slice(0, 2)
        .map((p) => JSON.parse(new TextDecoder().decode(sim.unb64(p.replace(/-/g, "+").replace(/_/g, "/")))));
    const [th, tc] = decode(theirs);
    const [oh, oc] = decode(ours);
    expect(oh.alg).toBe(th.alg);
    expect(oc.application_id).toBe(tc.application_id);
    expect(oc.exp - oc.iat).toBe(tc.exp - tc.iat);
    for (const claim of ["application_id", "iat", "jti", "exp"]) {
      expect(tc, claim).toHaveProperty(claim);
      expect(oc, claim).toHaveProperty(claim);
    }
    // Both verify with the application's public key, the way Vonage checks them.
    for (const token of [theirs, ours]) expect(await sim.verifyRs256(token, pair.publicKey)).toMatchObject({ application_id: appId });
    // And the key as the SDK takes it is one we can read.
    await expect(importVonagePrivateKey(pem)).resolves.toBeTruthy();
  });
});
