// The pure pieces on their own: masking, merging, readiness, the secret box, config preparation, schemas.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/lib/errors";
import { parseKeySpec, SecretBox, SecretBoxError } from "../../src/lib/secret-box";
import { callerIdStep, credentialsStep, readiness, webhookSigningStep } from "../../src/telephony/providers/checklist";
import { prepareCreate, prepareUpdate, redactSecretInputs } from "../../src/telephony/config-input";
import { classifySecretInput, maskSecret } from "../../src/lib/mask";
import { deepMerge, deletePath, getPath, setPath } from "../../src/telephony/merge";
import { getProvider, PROVIDER_LIST } from "../../src/telephony/providers/registry";
import { openSecrets, storedSecrets } from "../../src/telephony/secrets";

const k1 = `k1:${btoa(String.fromCharCode(...new Uint8Array(32).fill(1)))}`;
const k2 = `k2:${btoa(String.fromCharCode(...new Uint8Array(32).fill(2)))}`;

describe("maskSecret", () => {
  it("shows only the last 4 characters; 4 or fewer are all stars", () => {
    const cases = { abcdefgh: "****efgh", abcde: "*bcde", abcd: "****", ab: "**", "": "", "ééééé😀": "**ééé😀" };
    for (const [secret, masked] of Object.entries(cases)) expect(maskSecret(secret)).toBe(masked);
    expect(Array.from(maskSecret("ééééé😀"))).toHaveLength(6);
  });

  it("classifies a returned value against the current mask", () => {
    expect(classifySecretInput("****efgh", "****efgh")).toEqual({ kind: "keep" });
    expect(classifySecretInput("****zzzz", "****efgh")).toEqual({ kind: "invalid" });
    expect(classifySecretInput("***", null)).toEqual({ kind: "invalid" });
    expect(classifySecretInput("new-secret", "****efgh")).toEqual({ kind: "new", value: "new-secret" });
    expect(classifySecretInput("**two-stars-is-fine", null)).toEqual({ kind: "new", value: "**two-stars-is-fine" });
  });
});

describe("deepMerge and paths", () => {
  it("merges objects key by key; scalars, arrays and null replace; undefined keeps", () => {
    const base = { a: 1, nested: { x: 1, y: { z: 1 } }, list: [1, 2], gone: { k: 1 } };
    const merged = deepMerge(base, { a: 2, nested: { y: { w: 2 } }, list: [3], gone: null, skip: undefined });
    expect(merged).toEqual({ a: 2, nested: { x: 1, y: { z: 1, w: 2 } }, list: [3], gone: null });
    expect(base).toEqual({ a: 1, nested: { x: 1, y: { z: 1 } }, list: [1, 2], gone: { k: 1 } });
    expect(deepMerge({ o: null }, { o: { a: 1 } })).toEqual({ o: { a: 1 } });
  });

  it("reads, writes and deletes dotted paths without creating parents", () => {
    const o: Record<string, unknown> = { a: { b: { c: 1 } }, n: null };
    expect(getPath(o, "a.b.c")).toBe(1);
    expect(getPath(o, "n.x")).toBeUndefined();
    expect(setPath(o, "a.b.d", 2)).toBe(true);
    expect(setPath(o, "n.x", 2)).toBe(false);
    expect(setPath(o, "missing.x", 2)).toBe(false);
    deletePath(o, "a.b.c");
    expect(o).toEqual({ a: { b: { d: 2 } }, n: null });
  });
});

describe("readiness", () => {
  it("is never ready while a blocking step is incomplete; non-blocking steps do not matter", () => {
    const active = { inactive: false, reason: null };
    expect(readiness([credentialsStep(null), callerIdStep(1, true)], active)).toEqual({ ready: true, blockedReason: null });
    const blocked = readiness([credentialsStep(null), callerIdStep(0, true), webhookSigningStep(false, "x")], active);
    expect(blocked.ready).toBe(false);
    expect(blocked.blockedReason).toContain("'caller_id'");
    expect(readiness([credentialsStep("401 Unauthorized"), callerIdStep(0, true)], active).blockedReason).toContain("'credentials'");
    expect(readiness([callerIdStep(0, false), webhookSigningStep(false, "x")], active).ready).toBe(true);
    expect(readiness([credentialsStep(null)], { inactive: true, reason: "PBX down" })).toEqual({
      ready: false,
      blockedReason: "Configuration is inactive: PBX down",
    });
  });
});

describe("SecretBox", () => {
  it("parses ENCRYPTION_KEYS strictly", () => {
    expect(parseKeySpec(`${k1}, ${k2}`).map((k) => k.kid)).toEqual(["k1", "k2"]);
    for (const bad of ["", "k1", "k1:", ":abc", `k1:${btoa("short")}`, "k1:%%%", `${k1},${k1}`]) {
      expect(() => parseKeySpec(bad), bad).toThrow(SecretBoxError);
    }
  });

  it("seals with the first key, opens with any, binds the AAD, refuses tampering", async () => {
    const box = SecretBox.fromSpec(`${k1},${k2}`);
    const a = await box.encrypt("hunter2", "org/1/f");
    const b = await box.encrypt("hunter2", "org/1/f");
    expect(a.kid).toBe("k1");
    expect(a.iv).not.toBe(b.iv);
    expect(a.ct).not.toContain("hunter2");
    expect(await box.decrypt(a, "org/1/f")).toBe("hunter2");
    await expect(box.decrypt(a, "org/2/f")).rejects.toBeInstanceOf(SecretBoxError);
    const ct = Uint8Array.from(atob(a.ct), (c) => c.charCodeAt(0));
    ct[0] ^= 1;
    await expect(box.decrypt({ ...a, ct: btoa(String.fromCharCode(...ct)) }, "org/1/f")).rejects.toBeInstanceOf(SecretBoxError);
    await expect(SecretBox.fromSpec(k2).decrypt(a, "org/1/f")).rejects.toThrow(/No decryption key with id k1/);
  });

  it("rekey moves an envelope to the current key and leaves current ones alone", async () => {
    const old = await SecretBox.fromSpec(k1).encrypt("s3cret", "aad");
    const rotated = SecretBox.fromSpec(`${k2},${k1}`);
    expect(rotated.isStale(old)).toBe(true);
    const moved = await rotated.rekey(old, "aad");
    expect(moved.kid).toBe("k2");
    expect(await SecretBox.fromSpec(k2).decrypt(moved, "aad")).toBe("s3cret");
    expect(await rotated.rekey(moved, "aad")).toBe(moved);
  });
});

describe("prepareCreate / prepareUpdate", () => {
  const box = SecretBox.fromSpec(k1);
  const ari = getProvider("ari");
  const full = {
    provider: "ari",
    ari_endpoint: "http://pbx:8088",
    app_name: "app",
    app_password: "pbx-password",
    external_pbx: { agent_api: { url: "https://d/agc", username: "u", password: "agent-password" } },
    from_numbers: ["1001"],
  };

  it("create stores non-secret fields with defaults and seals every secret", async () => {
    const p = await prepareCreate(ari, full, 7, box);
    expect(p.config).toEqual({
      ari_endpoint: "http://pbx:8088",
      app_name: "app",
      ws_client_name: "",
      dial_string_template: "PJSIP/{number}",
      allowed_dial_strings: [],
      external_pbx: { type: "vicidial", agent_api: { url: "https://d/agc", username: "u", source: "edgedial" }, timeout_seconds: 8 },
    });
    expect(Object.keys(p.secrets).sort()).toEqual(["app_password", "external_pbx.agent_api.password"]);
    expect(p.secrets.app_password.mask).toBe("********word");
    expect(JSON.stringify(p)).not.toContain("pbx-password");
    expect(await openSecrets(box, 7, storedSecrets(p.secrets))).toEqual({ app_password: "pbx-password", "external_pbx.agent_api.password": "agent-password" });
    // sealed for organization 7 only
    await expect(openSecrets(box, 8, storedSecrets(p.secrets))).rejects.toBeInstanceOf(SecretBoxError);
  });

  it("update merges partially, keeps secrets sent back as masks, and re-validates the result", async () => {
    const stored = await prepareCreate(ari, full, 7, box);
    const kept = await prepareUpdate(
      ari,
      stored,
      { app_password: "********word", external_pbx: { timeout_seconds: 20, agent_api: { password: stored.secrets["external_pbx.agent_api.password"].mask } } },
      7,
      box,
    );
    expect(kept.config.external_pbx).toMatchObject({ timeout_seconds: 20, agent_api: { url: "https://d/agc" } });
    expect(kept.secrets).toEqual(stored.secrets);

    // removing the object removes the secrets beneath it
    const removed = await prepareUpdate(ari, stored, { external_pbx: null }, 7, box);
    expect(removed.config.external_pbx).toBeNull();
    expect(Object.keys(removed.secrets)).toEqual(["app_password"]);

    // adding it back needs its required fields, reported at their locs
    const partial = await prepareUpdate(ari, removed, { external_pbx: { agent_api: { url: "https://d" } } }, 7, box).catch((e) => e);
    expect(partial).toBeInstanceOf(ApiError);
    expect((partial as ApiError).detail).toEqual([
      expect.objectContaining({ loc: ["body", "config", "external_pbx", "agent_api", "username"], type: "missing" }),
      expect.objectContaining({ loc: ["body", "config", "external_pbx", "agent_api", "password"], type: "missing" }),
    ]);

    const wrongMask = await prepareUpdate(ari, stored, { app_password: "***" }, 7, box).catch((e) => e);
    expect((wrongMask as ApiError).detail).toEqual([expect.objectContaining({ loc: ["body", "config", "app_password"] })]);
    const wrongProvider = await prepareUpdate(ari, stored, { provider: "twilio" }, 7, box).catch((e) => e);
    expect((wrongProvider as ApiError).detail).toEqual([
      expect.objectContaining({ loc: ["body", "config", "provider"], msg: "Provider cannot be changed; create a new configuration instead" }),
    ]);

    // no config at all (a rename): everything stays
    expect(await prepareUpdate(ari, stored, undefined, 7, box)).toEqual(stored);
  });

  it("the internal placeholder sent by a client is just a new secret where none is stored", async () => {
    const vonage = getProvider("vonage");
    const stored = await prepareCreate(
      vonage,
      {
        provider: "vonage",
        api_key: "k",
        api_secret: "s-1234",
        application_id: "aaaaaaaa-0000-4000-8000-000000000001",
        private_key: "-----BEGIN PRIVATE KEY-----\npk-5678\n-----END PRIVATE KEY-----",
      },
      1,
      box,
    );
    const p = await prepareUpdate(vonage, stored, { signature_secret: "\u0000kept\u0000" }, 1, box);
    expect(Object.keys(p.secrets).sort()).toEqual(["api_secret", "private_key", "signature_secret"]);
    expect((await openSecrets(box, 1, p.secrets)).signature_secret).toBe("\u0000kept\u0000");
  });

  it("redacts secret inputs from 422 items", () => {
    const items = redactSecretInputs(
      [
        { loc: ["body", "config", "auth_token"], msg: "m", type: "t", input: "secret" },
        { loc: ["body", "config", "external_pbx"], msg: "m", type: "t", input: "x" },
        { loc: ["body", "config", "account_sid"], msg: "m", type: "t", input: 5 },
        { loc: ["body", "config", "nested"], msg: "m", type: "t", input: { a: 1 } },
      ],
      ["auth_token", "external_pbx.agent_api.password"],
    );
    expect(items.map((i) => "input" in i)).toEqual([false, false, true, false]);
  });
});

describe("provider definitions", () => {
  it("update schemas apply no defaults and require nothing; create schemas apply defaults", () => {
    for (const p of PROVIDER_LIST) {
      expect(p.updateSchema.parse({}), p.name).toEqual({});
      // Every carrier has a secret; the local sandbox has none (the simulator's account is public on purpose).
      if (!p.localOnly) expect(p.sensitive.length, p.name).toBeGreaterThan(0);
      for (const path of p.sensitive) expect(p.fields.find((f) => f.name === path)?.sensitive, `${p.name} ${path}`).toBe(true);
    }
    expect(getProvider("twilio").createSchema.parse({ provider: "twilio", account_sid: "AC00000000000000000000000000000001", auth_token: "t" })).toMatchObject({
      amd_enabled: false,
    });
    expect(() => getProvider("nope")).toThrow();
  });
});
