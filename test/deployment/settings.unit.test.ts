// The pure rules behind the fail-closed deployment: PUBLIC_BASE_URL normalization and the URL join callbacks and
// signature checks share (src/lib/settings.ts), `npm run deploy`'s plan (scripts/lib/deploy-plan.ts) and
// `npm run dev`'s arguments (scripts/lib/dev-args.ts).
import { describe, expect, it } from "vitest";
import { PLACEHOLDER_D1_ID, deployProblems, isLocalDev, normalizePublicBaseUrl, publicUrl } from "../../src/lib/settings";
import { callbackUrls } from "../../src/calls/callbacks/callback-urls";
import { freshSecrets, isMissingWorker, planDeploy, problemsReport, secretNamesOf } from "../../scripts/lib/deploy-plan";
import { planDev } from "../../scripts/lib/dev-args";
import { parseKeySpec } from "../../src/lib/secret-box";

describe("normalizePublicBaseUrl", () => {
  it.each([
    ["https://dial.example.com", "https://dial.example.com"],
    ["https://dial.example.com/", "https://dial.example.com"],
    ["https://dial.example.com///", "https://dial.example.com"],
    ["  https://Dial.Example.COM:443/ ", "https://dial.example.com"],
    ["https://dial.example.com:8443/", "https://dial.example.com:8443"],
  ])("deployed: %j → %j", (raw, url) => {
    expect(normalizePublicBaseUrl(raw, false)).toEqual({ ok: true, url });
  });

  it.each([
    ["", "is not set", true],
    ["   ", "is not set", true],
    ["dial.example.com", "is not an absolute URL", false],
    ["http://dial.example.com", "must start with https://", false],
    ["ftp://dial.example.com", "must start with https://", false],
    ["https://dial.example.com/edgedial", "must be an origin only (no path, query or fragment)", false],
    ["https://dial.example.com/?x=1", "must be an origin only (no path, query or fragment)", false],
    ["https://dial.example.com/#top", "must be an origin only (no path, query or fragment)", false],
    ["https://user:secret@dial.example.com", "must not carry credentials", false],
  ])("deployed: %j is refused (%s)", (raw, reason, missing) => {
    expect(normalizePublicBaseUrl(raw, false)).toEqual({ ok: false, missing, reason });
  });

  it("allows http:// in local development only", () => {
    expect(normalizePublicBaseUrl("http://127.0.0.1:8787/", true)).toEqual({ ok: true, url: "http://127.0.0.1:8787" });
    expect(normalizePublicBaseUrl("http://edgedial.test", true)).toEqual({ ok: true, url: "http://edgedial.test" });
    expect(normalizePublicBaseUrl("ftp://x.test", true)).toMatchObject({ ok: false });
  });

  it("reads LOCAL_DEV as a flag", () => {
    for (const v of ["true", "1", "yes", "TRUE", " true "]) expect(isLocalDev(v), v).toBe(true);
    for (const v of [undefined, "", "false", "0", "no", "production"]) expect(isLocalDev(v), String(v)).toBe(false);
  });
});

describe("one join for callback URLs and the URLs signatures are checked over", () => {
  it("never doubles the slash", () => {
    expect(publicUrl("https://a.test", "/api/v1/x")).toBe("https://a.test/api/v1/x");
    expect(publicUrl("https://a.test/", "/api/v1/x")).toBe("https://a.test/api/v1/x");
    expect(publicUrl("https://a.test//", "api/v1/x?q=1")).toBe("https://a.test/api/v1/x?q=1");
  });

  it("callbackUrls builds every URL with it", async () => {
    const u = await callbackUrls("s", "https://a.test/", "twilio", 7);
    expect(u.answerUrl).toMatch(/^https:\/\/a\.test\/api\/v1\/telephony\/twilio\/answer\/7\/[0-9a-f]{64}$/);
    expect(u.statusUrl).toMatch(/^https:\/\/a\.test\/api\/v1\/telephony\/twilio\/status\/7\//);
    expect(u.streamUrl).toMatch(/^wss:\/\/a\.test\/api\/v1\/telephony\/twilio\/stream\/7\//);
  });
});

describe("npm run deploy: what it refuses", () => {
  const ID = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f";
  const ALL = ["ENCRYPTION_KEYS", "CALLBACK_SECRET", "UPLOAD_SIGNING_SECRET"];
  const toml = (vars: Record<string, unknown>, database_id = ID) => ({ vars, d1_databases: [{ binding: "DB", database_id }] });

  it("nothing for a complete deployment", () => {
    expect(deployProblems({ vars: { PUBLIC_BASE_URL: "https://d.example.com" }, secretNames: ALL, databaseId: ID })).toEqual([]);
    expect(planDeploy(toml({ PUBLIC_BASE_URL: "https://d.example.com/" }), {}, ALL)).toEqual({ problems: [], deployArgs: [], secretsFromEnv: {} });
  });

  it("names everything to fix at once: placeholder database, base URL, LOCAL_DEV, each missing secret", () => {
    const problems = deployProblems({
      vars: { PUBLIC_BASE_URL: "http://127.0.0.1:8787", LOCAL_DEV: "true" },
      secretNames: ["CALLBACK_SECRET", "OTHER"],
      databaseId: PLACEHOLDER_D1_ID,
    });
    expect(problems.map((p) => p.name)).toEqual(["database_id", "PUBLIC_BASE_URL", "LOCAL_DEV", "ENCRYPTION_KEYS", "UPLOAD_SIGNING_SECRET"]);
    expect(problems[0].message).toContain("wrangler d1 create edgedial");
    expect(problems[1].message).toContain("must start with https://");
    expect(problems[3].message).toContain("wrangler secret put ENCRYPTION_KEYS");
    expect(problems[4].message).toContain("npm run secrets:generate");
    const report = problemsReport(problems);
    expect(report.split("\n")[0]).toBe("Not deploying: 5 things to fix first.");
    expect(report).toContain("  - UPLOAD_SIGNING_SECRET: UPLOAD_SIGNING_SECRET is not set");
  });

  it("a missing database id or DB binding is the placeholder's problem too", () => {
    expect(planDeploy({ vars: { PUBLIC_BASE_URL: "https://d.example.com" } }, {}, ALL).problems.map((p) => p.name)).toEqual(["database_id"]);
    expect(planDeploy(toml({ PUBLIC_BASE_URL: "https://d.example.com" }, PLACEHOLDER_D1_ID), {}, ALL).problems.map((p) => p.name)).toEqual(["database_id"]);
  });

  it("PUBLIC_BASE_URL from the environment (CI) overrides wrangler.jsonc's and is passed as a --var", () => {
    const plan = planDeploy(toml({ PUBLIC_BASE_URL: "" }), { PUBLIC_BASE_URL: "https://ci.example.com" }, ALL);
    expect(plan.problems).toEqual([]);
    expect(plan.deployArgs).toEqual(["--var", "PUBLIC_BASE_URL:https://ci.example.com"]);
    expect(
      planDeploy(toml({ PUBLIC_BASE_URL: "https://ok.example.com" }), { PUBLIC_BASE_URL: "http://bad.example.com" }, ALL).problems.map((p) => p.name),
    ).toEqual(["PUBLIC_BASE_URL"]);
  });

  it("secrets given in the environment count, and are uploaded with the version", () => {
    const plan = planDeploy(
      toml({ PUBLIC_BASE_URL: "https://d.example.com" }),
      { ENCRYPTION_KEYS: "k1:x", CALLBACK_SECRET: "c", UPLOAD_SIGNING_SECRET: " " },
      [],
    );
    expect(plan.secretsFromEnv).toEqual({ ENCRYPTION_KEYS: "k1:x", CALLBACK_SECRET: "c" });
    expect(plan.problems.map((p) => p.name)).toEqual(["UPLOAD_SIGNING_SECRET"]);
  });

  it("secrets that could not be listed are one problem (log in), not three missing ones", () => {
    const plan = planDeploy(toml({ PUBLIC_BASE_URL: "https://d.example.com" }), {}, null);
    expect(plan.problems.map((p) => p.name)).toEqual(["wrangler login"]);
    expect(plan.problems[0].message).toContain("CLOUDFLARE_API_TOKEN");
  });

  it("reads `wrangler secret list` and tells a first deploy (no Worker yet) from a failure", () => {
    expect(secretNamesOf('[\n  {"name": "CALLBACK_SECRET", "type": "secret_text"},\n  {"name": "ENCRYPTION_KEYS", "type": "secret_text"}\n]\n')).toEqual([
      "CALLBACK_SECRET",
      "ENCRYPTION_KEYS",
    ]);
    expect(secretNamesOf("[]")).toEqual([]);
    expect(() => secretNamesOf("✘ [ERROR] boom")).toThrow();
    expect(isMissingWorker("✘ [ERROR] A request to the Cloudflare API failed.\n  This Worker does not exist on your account. [code: 10007]")).toBe(true);
    expect(isMissingWorker("✘ [ERROR] In a non-interactive environment, it's necessary to set a CLOUDFLARE_API_TOKEN")).toBe(false);
  });
});

describe("npm run secrets:generate", () => {
  it("prints values the Worker accepts, fresh each time", () => {
    const a = freshSecrets();
    const b = freshSecrets();
    expect(parseKeySpec(a.ENCRYPTION_KEYS)).toHaveLength(1);
    expect(parseKeySpec(a.ENCRYPTION_KEYS)[0].raw).toHaveLength(32);
    expect(a.CALLBACK_SECRET).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.UPLOAD_SIGNING_SECRET).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set([a.ENCRYPTION_KEYS, a.CALLBACK_SECRET, a.UPLOAD_SIGNING_SECRET, b.ENCRYPTION_KEYS, b.CALLBACK_SECRET]).size).toBe(5);
  });
});

describe("npm run dev -- --port N", () => {
  it("defaults to 127.0.0.1:8787", () => {
    expect(planDev([])).toEqual({
      port: 8787,
      ip: "127.0.0.1",
      url: "http://127.0.0.1:8787",
      publicBaseUrl: "http://127.0.0.1:8787",
      workersAi: false,
      // Local bindings only: Workers AI (remote only) would ask for a Cloudflare login. The scheduled handler on
      // its own route (wrangler dev runs no crons), which npm run dev calls every minute.
      wranglerArgs: [
        "dev",
        "--ip",
        "127.0.0.1",
        "--port",
        "8787",
        "--local",
        "--test-scheduled",
        "--var",
        "PUBLIC_BASE_URL:http://127.0.0.1:8787",
        "--var",
        "LOCAL_DEV:true",
        // Answered calls get the voice agent, here on the offline engines (src/agent/local-model.ts).
        "--var",
        "VOICE_AGENT:conversation",
        "--var",
        "OFFLINE_ENGINES:true",
      ],
      sweepUrl: "http://127.0.0.1:8787/__scheduled?cron=*%2F15%20*%20*%20*%20*",
    });
  });

  it("--workers-ai: the AI binding reaches Cloudflare and answered calls get the conversation agent", () => {
    const plan = planDev(["--workers-ai", "--port", "9004"]);
    expect(plan.workersAi).toBe(true);
    expect(plan.wranglerArgs).not.toContain("--local");
    expect(plan.wranglerArgs).not.toContain("--workers-ai");
    expect(plan.wranglerArgs.slice(-2)).toEqual(["--var", "VOICE_AGENT:conversation"]);
  });

  it.each([[["--port", "9123"]], [["--port=9123"]], [["-p", "9123"]]])("%j gives wrangler one --port, and the base URL follows it", (argv) => {
    const plan = planDev(argv);
    expect(plan.wranglerArgs.filter((a) => a === "--port")).toHaveLength(1);
    expect(plan.wranglerArgs.slice(0, 5)).toEqual(["dev", "--ip", "127.0.0.1", "--port", "9123"]);
    expect(plan.url).toBe("http://127.0.0.1:9123");
    expect(plan.publicBaseUrl).toBe("http://127.0.0.1:9123");
  });

  it("the last --port wins; other flags pass through before the --vars", () => {
    const plan = planDev(["--port", "9000", "--persist-to", "/tmp/x", "--port", "9001", "--log-level", "warn"]);
    expect(plan.port).toBe(9001);
    expect(plan.wranglerArgs).toEqual([
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      "9001",
      "--local",
      "--test-scheduled",
      "--persist-to",
      "/tmp/x",
      "--log-level",
      "warn",
      "--var",
      "PUBLIC_BASE_URL:http://127.0.0.1:9001",
      "--var",
      "LOCAL_DEV:true",
      "--var",
      "VOICE_AGENT:conversation",
      "--var",
      "OFFLINE_ENGINES:true",
    ]);
  });

  it("--ip moves the address; a wildcard address is reached on loopback", () => {
    expect(planDev(["--ip", "0.0.0.0", "--port", "9002"]).url).toBe("http://127.0.0.1:9002");
    expect(planDev(["--ip", "0.0.0.0"]).wranglerArgs.slice(1, 3)).toEqual(["--ip", "0.0.0.0"]);
    expect(planDev(["--ip=::1"]).url).toBe("http://[::1]:8787");
  });

  it("PUBLIC_BASE_URL from the environment (a tunnel) is kept", () => {
    expect(planDev(["--port", "9003"], { PUBLIC_BASE_URL: "https://abc.trycloudflare.com" }).publicBaseUrl).toBe("https://abc.trycloudflare.com");
  });

  it.each([[["--port"]], [["--port", "0"]], [["--port", "70000"]], [["--port", "80a"]], [["--port="]]])("refuses %j", (argv) => {
    expect(() => planDev(argv)).toThrow(/--port/);
  });
});
