// `npm run dev -- [--port N] [--ip ADDR] [--workers-ai] [other wrangler dev flags]`: the one place the port and
// address are decided, so wrangler gets each once and the banner and the dev PUBLIC_BASE_URL follow them. Pure, for
// tests. Local bindings only (`--local`: Workers AI has no local simulation, and asks for a login), unless
// `--workers-ai`: the Worker still runs here, its AI binding reaches Cloudflare, and answered calls get the
// conversation agent on it.

export const DEFAULT_PORT = 8787;
export const DEFAULT_IP = "127.0.0.1";

/** How often `npm run dev` runs the Worker's scheduled sweep (wrangler dev runs no cron triggers). */
export const DEV_SWEEP_SECONDS = 60;

export type DevPlan = {
  port: number;
  ip: string;
  url: string;
  publicBaseUrl: string;
  workersAi: boolean;
  wranglerArgs: string[];
  /**
   * The user's own `--var CARRIER_BASE_URLS:{...}`, taken out of wrangler's flags: npm run dev adds the sandbox's
   * simulator to it (unless it names `sandbox` itself) rather than overriding it with a --var of its own.
   */
  carrierBaseUrls?: string;
  /** Runs the Worker's scheduled handler (the run watchdog, the import sweep): wrangler's --test-scheduled route. */
  sweepUrl: string;
};

/** Takes `--port N`, `--port=N`, `-p N` and `--ip ...` out of argv; everything else goes to wrangler unchanged. */
export function planDev(argv: string[], env: Record<string, string | undefined> = {}): DevPlan {
  let port = DEFAULT_PORT;
  let ip = DEFAULT_IP;
  let workersAi = false;
  let carrierBaseUrls: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--workers-ai") {
      workersAi = true;
      continue;
    }
    const v = /^--var(?:=(.*))?$/.exec(arg);
    const assignment = v ? (v[1] ?? argv[i + 1]) : undefined;
    if (assignment?.startsWith("CARRIER_BASE_URLS:")) {
      carrierBaseUrls = assignment.slice("CARRIER_BASE_URLS:".length);
      if (v?.[1] === undefined) i++;
      continue;
    }
    const m = /^(--port|-p|--ip)(?:=(.*))?$/.exec(arg);
    if (!m) {
      rest.push(arg);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === "") throw new Error(`${m[1]} needs a value`);
    if (m[1] === "--ip") ip = value;
    else {
      if (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535)
        throw new Error(`--port must be a number from 1 to 65535, got ${JSON.stringify(value)}`);
      port = Number(value);
    }
  }
  // Where a browser or curl on this machine reaches the server (a wildcard address is not one).
  const host = ip === "0.0.0.0" || ip === "::" || ip === "*" ? "127.0.0.1" : ip.includes(":") ? `[${ip}]` : ip;
  const url = `http://${host}:${port}`;
  // Campaign calls are placed by Durable Objects, which have no request origin to build callback URLs from.
  const publicBaseUrl = env.PUBLIC_BASE_URL?.trim() || url;
  return {
    port,
    ip,
    url,
    publicBaseUrl,
    workersAi,
    ...(carrierBaseUrls !== undefined ? { carrierBaseUrls } : {}),
    sweepUrl: `${url}/__scheduled?cron=${encodeURIComponent("*/15 * * * *")}`,
    // The user's flags before --var: yargs lets an array flag swallow the positional arguments that follow it.
    wranglerArgs: [
      "dev",
      "--ip",
      ip,
      "--port",
      String(port),
      ...(workersAi ? [] : ["--local"]),
      // The scheduled handler on a route of its own: npm run dev calls it, as the cron would when deployed.
      "--test-scheduled",
      ...rest,
      "--var",
      `PUBLIC_BASE_URL:${publicBaseUrl}`,
      "--var",
      "LOCAL_DEV:true",
      // The voice agent on every answered call: on Workers AI with --workers-ai, else on the offline engines (the
      // AI binding exists locally too, but only reaches anything remotely).
      "--var",
      "VOICE_AGENT:conversation",
      ...(workersAi ? [] : ["--var", "OFFLINE_ENGINES:true"]),
    ],
  };
}
