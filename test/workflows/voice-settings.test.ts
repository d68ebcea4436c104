// An agent's voice providers in workflow_configurations.voice_agent: checked on save, keys sealed at rest, shown only
// masked, kept by their mask only for the same provider and endpoint, opened for a call.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SecretBox } from "../../src/lib/secret-box";
import { openVoiceSettings } from "../../src/workflows/voice-settings";
import { call, createOrg } from "../helpers";
import { minimalDefinition } from "./fixtures";

const OPENAI_KEY = "sk-test-0123456789abcdef";
const DEEPGRAM_KEY = "dg-0123456789-secret";

const voice = (llm: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  llm,
  stt: { provider: "deepgram", api_key: DEEPGRAM_KEY },
  tts: { provider: "elevenlabs", api_key: "el-key-abcdefgh", voice: "21m00Tcm4TlvDq8ikWAM" },
  ...extra,
});

async function createAgent(key: string, voiceAgent: unknown, other: Record<string, unknown> = {}) {
  return call("POST", "/api/v1/workflow/create", {
    key,
    body: { name: "voice", workflow_definition: minimalDefinition(), workflow_configurations: { ...other, voice_agent: voiceAgent } },
  });
}

const storedConfigurations = async (id: number) =>
  JSON.parse((await env.DB.prepare("SELECT workflow_configurations AS c FROM workflows WHERE id = ?").bind(id).first<{ c: string }>())!.c);

describe("voice_agent providers", () => {
  it("keeps Flux's end-of-turn confidences as given (eager null: no reply started ahead)", async () => {
    const org = await createOrg();
    const stt = { provider: "workers-ai", model: "@cf/deepgram/flux", eot_threshold: 0.8, eager_eot_threshold: null };
    const res = await createAgent(org.key, { stt });
    expect(res.status, res.text).toBe(200);
    expect((await storedConfigurations(res.json.id)).voice_agent.stt).toEqual(stt);
  });

  it("seals every key: D1 holds no key, reads show the mask, a call opens them", async () => {
    const org = await createOrg();
    const res = await createAgent(org.key, voice({ provider: "openai", base_url: "https://api.example.com/v1", model: "gpt-4o-mini", api_key: OPENAI_KEY }), {
      theme: "x",
    });
    expect(res.status).toBe(200);
    const shown = res.json.workflow_configurations;
    expect(shown.theme).toBe("x");
    expect(shown.voice_agent.llm).toEqual({
      provider: "openai",
      base_url: "https://api.example.com/v1",
      model: "gpt-4o-mini",
      api_key: "********************cdef",
    });
    expect(shown.voice_agent.stt.api_key).toBe("****************cret");
    expect(JSON.stringify(shown)).not.toContain(OPENAI_KEY);

    const raw = JSON.stringify(await storedConfigurations(res.json.id));
    for (const secret of [OPENAI_KEY, DEEPGRAM_KEY, "el-key-abcdefgh"]) expect(raw).not.toContain(secret);
    const fetched = await call("GET", `/api/v1/workflow/fetch/${res.json.id}`, { key: org.key });
    expect(fetched.json.workflow_configurations).toEqual(shown);

    const opened = await openVoiceSettings(SecretBox.fromEnv(env), org.id, await storedConfigurations(res.json.id));
    expect(opened?.llm).toMatchObject({ provider: "openai", api_key: OPENAI_KEY });
    expect(opened?.stt).toMatchObject({ provider: "deepgram", api_key: DEEPGRAM_KEY });
    // Another organization's AAD does not open them.
    await expect(openVoiceSettings(SecretBox.fromEnv(env), org.id + 1, await storedConfigurations(res.json.id))).rejects.toThrow();
  });

  it("keeps a key sent back as its mask, or omitted, for the same provider and endpoint; a new key replaces it", async () => {
    const org = await createOrg();
    const created = await createAgent(org.key, voice({ provider: "openai", base_url: "https://api.example.com/v1", model: "m1", api_key: OPENAI_KEY }));
    const id = created.json.id;
    const put = (voiceAgent: unknown) =>
      call("PUT", `/api/v1/workflow/${id}`, { key: org.key, body: { workflow_configurations: { voice_agent: voiceAgent } } });

    const echoed = await put(created.json.workflow_configurations.voice_agent);
    expect(echoed.status).toBe(200);
    const { tts, llm } = created.json.workflow_configurations.voice_agent;
    const omitted = await put({ llm: { ...llm, api_key: undefined, model: "m2" }, stt: { provider: "deepgram" }, tts });
    expect(omitted.status).toBe(200);
    let opened = await openVoiceSettings(SecretBox.fromEnv(env), org.id, await storedConfigurations(id));
    expect(opened?.llm).toMatchObject({ model: "m2", api_key: OPENAI_KEY });
    expect(opened?.stt).toMatchObject({ api_key: DEEPGRAM_KEY });

    expect((await put({ ...created.json.workflow_configurations.voice_agent, llm: { ...llm, api_key: "sk-new-key-9999" } })).status).toBe(200);
    opened = await openVoiceSettings(SecretBox.fromEnv(env), org.id, await storedConfigurations(id));
    expect(opened?.llm).toMatchObject({ api_key: "sk-new-key-9999" });
  });

  it("never carries a stored key to another endpoint or provider", async () => {
    const org = await createOrg();
    const created = await createAgent(org.key, voice({ provider: "openai", base_url: "https://api.example.com/v1", model: "m", api_key: OPENAI_KEY }));
    const va = created.json.workflow_configurations.voice_agent;
    const moved = await call("PUT", `/api/v1/workflow/${created.json.id}`, {
      key: org.key,
      body: { workflow_configurations: { voice_agent: { ...va, llm: { ...va.llm, base_url: "https://attacker.example/v1" } } } },
    });
    expect(moved.status).toBe(422);
    expect(moved.json.detail[0].loc).toEqual(["body", "workflow_configurations", "voice_agent", "llm", "api_key"]);
    // Omitted for a new endpoint: no key is sent there (an OpenAI-compatible endpoint may need none).
    const { api_key: _k, ...llmNoKey } = va.llm;
    const noKey = await call("PUT", `/api/v1/workflow/${created.json.id}`, {
      key: org.key,
      body: { workflow_configurations: { voice_agent: { ...va, llm: { ...llmNoKey, base_url: "https://other.example/v1" } } } },
    });
    expect(noKey.status).toBe(200);
    expect(noKey.json.workflow_configurations.voice_agent.llm.api_key).toBeUndefined();
    const switched = await call("PUT", `/api/v1/workflow/${created.json.id}`, {
      key: org.key,
      body: { workflow_configurations: { voice_agent: { ...va, llm: llmNoKey, stt: { provider: "elevenlabs", api_key: va.stt.api_key } } } },
    });
    expect(switched.status).toBe(422);
    expect(switched.json.detail[0].loc).toEqual(["body", "workflow_configurations", "voice_agent", "stt", "api_key"]);
  });

  it("refuses unknown providers, missing keys and voices, bad names and metadata endpoints with located 422s", async () => {
    const org = await createOrg();
    const cases: [unknown, (string | number)[]][] = [
      [{ llm: { provider: "acme" } }, ["llm", "provider"]],
      [{ stt: { provider: "deepgram" } }, ["stt", "api_key"]],
      [{ tts: { provider: "elevenlabs", api_key: "k-12345678" } }, ["tts", "voice"]],
      [{ llm: { provider: "openai", base_url: "http://169.254.169.254/v1", model: "m" } }, ["llm", "base_url"]],
      [{ llm: { provider: "openai", base_url: "ftp://example.com", model: "m" } }, ["llm", "base_url"]],
      [{ llm: { provider: "workers-ai", model: "bad model name!" } }, ["llm", "model"]],
      [{ tts: { provider: "workers-ai", colour: "blue" } }, ["tts", "colour"]],
      [{ stt: { provider: "deepgram", api_key: "****************cret" } }, ["stt", "api_key"]],
      // Flux's confidences: Deepgram's ranges, and the eager one never above the one that ends the turn.
      [{ stt: { provider: "workers-ai", model: "@cf/deepgram/flux", eot_threshold: 0.95 } }, ["stt", "eot_threshold"]],
      [{ stt: { provider: "workers-ai", model: "@cf/deepgram/flux", eager_eot_threshold: 0.2 } }, ["stt", "eager_eot_threshold"]],
      [{ stt: { provider: "workers-ai", model: "@cf/deepgram/flux", eot_threshold: 0.6, eager_eot_threshold: 0.65 } }, ["stt", "eager_eot_threshold"]],
      [{ stt: { provider: "workers-ai", eager_eot_threshold: 0.8 } }, ["stt", "eager_eot_threshold"]],
    ];
    for (const [va, at] of cases) {
      const res = await createAgent(org.key, va);
      expect(res.status, JSON.stringify(va)).toBe(422);
      expect(res.json.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(["body", "workflow_configurations", "voice_agent", ...at]);
      expect(res.text).not.toContain("k-12345678");
    }
    const list = await call("GET", "/api/v1/workflow/fetch", { key: org.key });
    expect(list.json.items ?? list.json).toHaveLength(0);
  });
});
