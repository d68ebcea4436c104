// An agent's fallback engines (voice_agent.llm_fallbacks, stt_fallbacks, tts_fallbacks) and its failover settings:
// checked on save with located 422s, keys sealed like the primary's (never in D1, shown masked, kept by their mask
// only for the same provider and endpoint, wherever the engine moved in its list), opened for a call.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { enginesFor } from "../../src/agent/engines";
import { FailoverModel } from "../../src/agent/failover-model";
import { FailoverSpeechToText } from "../../src/agent/failover-speech";
import { WorkersAiModel } from "../../src/agent/workers-ai-model";
import { getDb } from "../../src/lib/db";
import { SecretBox } from "../../src/lib/secret-box";
import { allowsPrivatePbx } from "../../src/telephony/calling-policy";
import { openVoiceSettings } from "../../src/workflows/voice-settings";
import { call, createOrg } from "../helpers";
import { minimalDefinition } from "./fixtures";

const OPENAI_KEY = "sk-fallback-0123456789";
const OTHER_KEY = "sk-second-abcdefghij";
const DEEPGRAM_KEY = "dg-fallback-secret-42";

const createAgent = (key: string, voiceAgent: unknown) =>
  call("POST", "/api/v1/workflow/create", {
    key,
    body: { name: "voice", workflow_definition: minimalDefinition(), workflow_configurations: { voice_agent: voiceAgent } },
  });

const stored = async (id: number) =>
  JSON.parse((await env.DB.prepare("SELECT workflow_configurations AS c FROM workflows WHERE id = ?").bind(id).first<{ c: string }>())!.c);

const openai = (host: string, key?: string) => ({ provider: "openai", base_url: `https://${host}/v1`, model: "gpt-4o-mini", ...(key ? { api_key: key } : {}) });

describe("voice_agent fallbacks", () => {
  it("seals every fallback's key, shows only masks, opens them for a call; failover settings kept as given", async () => {
    const org = await createOrg();
    const va = {
      llm: { provider: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct" },
      llm_fallbacks: [{ provider: "workers-ai" }, openai("a.example.com", OPENAI_KEY)],
      stt_fallbacks: [{ provider: "deepgram", api_key: DEEPGRAM_KEY }],
      tts_fallbacks: [{ provider: "workers-ai", voice: "luna" }],
      failover: { first_byte_timeout_ms: 2000, cool_down_after: 2, cool_down_seconds: 60 },
    };
    const res = await createAgent(org.key, va);
    expect(res.status, res.text).toBe(200);
    const shown = res.json.workflow_configurations.voice_agent;
    expect(shown.llm_fallbacks).toEqual([{ provider: "workers-ai" }, { ...openai("a.example.com"), api_key: "******************6789" }]);
    expect(shown.stt_fallbacks).toEqual([{ provider: "deepgram", api_key: "*****************t-42" }]);
    expect(shown.failover).toEqual(va.failover);
    const raw = JSON.stringify(await stored(res.json.id));
    for (const secret of [OPENAI_KEY, DEEPGRAM_KEY]) {
      expect(raw).not.toContain(secret);
      expect(res.text).not.toContain(secret);
    }
    const fetched = await call("GET", `/api/v1/workflow/fetch/${res.json.id}`, { key: org.key });
    expect(fetched.json.workflow_configurations.voice_agent).toEqual(shown);

    const opened = await openVoiceSettings(SecretBox.fromEnv(env), org.id, await stored(res.json.id));
    expect(opened?.llm_fallbacks?.[1]).toMatchObject({ provider: "openai", api_key: OPENAI_KEY });
    expect(opened?.stt_fallbacks?.[0]).toMatchObject({ provider: "deepgram", api_key: DEEPGRAM_KEY });
    await expect(openVoiceSettings(SecretBox.fromEnv(env), org.id + 1, await stored(res.json.id))).rejects.toThrow();
  });

  it("keeps keys by their mask or omitted, also when the list is reordered; never for another endpoint", async () => {
    const org = await createOrg();
    const created = await createAgent(org.key, { llm_fallbacks: [openai("a.example.com", OPENAI_KEY), openai("b.example.com", OTHER_KEY)] });
    expect(created.status, created.text).toBe(200);
    const id = created.json.id;
    const put = (voiceAgent: unknown) =>
      call("PUT", `/api/v1/workflow/${id}`, { key: org.key, body: { workflow_configurations: { voice_agent: voiceAgent } } });
    const [a, b] = created.json.workflow_configurations.voice_agent.llm_fallbacks;

    // Swapped, masks sent back: each key stays with its endpoint.
    expect((await put({ llm_fallbacks: [b, a] })).status).toBe(200);
    let opened = await openVoiceSettings(SecretBox.fromEnv(env), org.id, await stored(id));
    expect(opened?.llm_fallbacks?.map((f) => [f.provider === "openai" && f.base_url, "api_key" in f && f.api_key])).toEqual([
      ["https://b.example.com/v1", OTHER_KEY],
      ["https://a.example.com/v1", OPENAI_KEY],
    ]);
    // Omitted: the key at the same place is kept.
    const { api_key: _k, ...bNoKey } = b;
    expect((await put({ llm_fallbacks: [bNoKey, a] })).status).toBe(200);
    opened = await openVoiceSettings(SecretBox.fromEnv(env), org.id, await stored(id));
    expect(opened?.llm_fallbacks?.[0]).toMatchObject({ api_key: OTHER_KEY });

    // A mask sent for another endpoint is refused, located at the list's entry.
    const moved = await put({ llm_fallbacks: [{ ...a, base_url: "https://attacker.example/v1" }] });
    expect(moved.status).toBe(422);
    expect(moved.json.detail[0].loc).toEqual(["body", "workflow_configurations", "voice_agent", "llm_fallbacks", 0, "api_key"]);
    expect(moved.text).not.toContain(OPENAI_KEY);
  });

  it("refuses bad fallbacks and failover settings with located 422s", async () => {
    const org = await createOrg();
    const cases: [unknown, (string | number)[]][] = [
      [{ llm_fallbacks: [{ provider: "acme" }] }, ["llm_fallbacks", 0, "provider"]],
      [{ stt_fallbacks: [{ provider: "workers-ai" }, { provider: "deepgram" }] }, ["stt_fallbacks", 1, "api_key"]],
      [{ tts_fallbacks: [{ provider: "elevenlabs", api_key: "k-12345678" }] }, ["tts_fallbacks", 0, "voice"]],
      [{ llm_fallbacks: [{ provider: "openai", base_url: "http://169.254.169.254/v1", model: "m" }] }, ["llm_fallbacks", 0, "base_url"]],
      [{ llm_fallbacks: [{ provider: "workers-ai" }, { provider: "workers-ai" }, { provider: "workers-ai" }, { provider: "workers-ai" }] }, ["llm_fallbacks"]],
      [{ llm_fallbacks: { provider: "workers-ai" } }, ["llm_fallbacks"]],
      [{ failover: { first_byte_timeout_ms: 100 } }, ["failover", "first_byte_timeout_ms"]],
      [{ failover: { cool_down_after: 0 } }, ["failover", "cool_down_after"]],
      [{ failover: { retries: 3 } }, ["failover", "retries"]],
    ];
    for (const [va, at] of cases) {
      const res = await createAgent(org.key, va);
      expect(res.status, JSON.stringify(va)).toBe(422);
      expect(res.json.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(["body", "workflow_configurations", "voice_agent", ...at]);
      expect(res.text).not.toContain("k-12345678");
    }
  });

  it("a call's engines: each part with fallbacks fails over, one without is the primary; a fallback's endpoint meets the organization's network policy", async () => {
    const org = await createOrg();
    const policy = () => allowsPrivatePbx(getDb(env), org.id);
    const choice = await enginesFor(
      env,
      org.id,
      { voice_agent: { llm_fallbacks: [{ provider: "workers-ai" }], stt_fallbacks: [{ provider: "workers-ai" }] } },
      policy,
    );
    expect(choice.ok).toBe(true);
    if (!choice.ok) return;
    expect(choice.engines.model).toBeInstanceOf(FailoverModel);
    expect(choice.engines.stt).toBeInstanceOf(FailoverSpeechToText);
    expect(choice.engines.failovers).toBeDefined();
    const plain = await enginesFor(env, org.id, { voice_agent: {} }, policy);
    expect(plain.ok && plain.engines.model).toBeInstanceOf(WorkersAiModel);
    expect(plain.ok && plain.engines.failovers).toBeUndefined();
    // A private address as a fallback: refused like the primary's for an organization that does not allow them.
    const ollama = { voice_agent: { llm_fallbacks: [{ provider: "openai", base_url: "http://127.0.0.1:11434/v1", model: "llama3" }] } };
    const refused = await enginesFor(env, org.id, ollama, policy);
    expect(!refused.ok && refused.reason).toMatch(/^The model endpoint refused/);
  });
});
