// Helpers for the local scripts: run wrangler with this Node (>= 22.12 from node_modules) and talk to D1.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { BusyRetryError, retryWhileBusy } from "./busy-retry.ts";
import { lineRedactor } from "./redacted-lines.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const WRANGLER = `${ROOT}node_modules/wrangler/bin/wrangler.js`;

const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Runs wrangler to completion; stdin is not a TTY, so its confirmations take their default. `timeoutMs` (tests): the
 * run is killed past it and the failure says so, since a blocked synchronous child also blocks the caller's own timers.
 */
export function wrangler(args, { quiet = false, timeoutMs } = {}) {
  const run = () => {
    const res = spawnSync(process.execPath, [WRANGLER, ...args], {
      cwd: ROOT,
      stdio: ["ignore", quiet ? "pipe" : "inherit", quiet ? "pipe" : "inherit"],
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      ...(timeoutMs ? { timeout: timeoutMs, killSignal: "SIGKILL" } : {}),
    });
    if (res.error?.code === "ETIMEDOUT") return { ok: false, output: `wrangler ${args.join(" ")} did not finish within ${timeoutMs} ms; killed\n` };
    if (res.status === 0) return { ok: true, value: res.stdout ?? "" };
    return { ok: false, output: `${res.stdout ?? ""}${res.stderr ?? ""}` };
  };
  // Only a quiet run's output can be read for SQLITE_BUSY; a loud one has gone to the terminal.
  try {
    return retryWhileBusy(run, `wrangler ${args.join(" ")}`, {
      attempts: quiet ? undefined : 1,
      sleep: sleepSync,
      onRetry: (n, ms, max) => process.stderr.write(`local D1 is busy (a running dev server?); retrying in ${ms} ms (${n}/${max})\n`),
    });
  } catch (err) {
    if (quiet && err instanceof BusyRetryError) process.stderr.write(err.output);
    throw err;
  }
}

/**
 * Runs wrangler in the foreground (`wrangler dev`), its output echoed with per-run callback tokens redacted: its
 * request log prints every path, and a carrier callback's path holds the run's token. Colors are kept on a terminal.
 */
export function wranglerLive(args) {
  const color = process.stdout.isTTY ? { FORCE_COLOR: "1" } : {};
  const child = spawn(process.execPath, [WRANGLER, ...args], {
    stdio: ["inherit", "pipe", "pipe"],
    env: { ...process.env, ...color, WRANGLER_SEND_METRICS: "false" },
  });
  echoRedacted(child);
  return child;
}

/** Echoes a child's stdout and stderr to ours, a line at a time, redacted (scripts/lib/redacted-lines.ts). */
export function echoRedacted(child) {
  for (const [from, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    const lines = lineRedactor();
    let timer = null;
    from.setEncoding("utf8");
    from.on("data", (chunk) => {
      to.write(lines.push(chunk));
      // A line still open after a moment (a prompt, the hotkey bar) is shown as it is, redacted.
      clearTimeout(timer);
      timer = setTimeout(() => to.write(lines.flush()), 100);
    });
    from.on("end", () => {
      clearTimeout(timer);
      to.write(lines.flush());
    });
  }
}

/** Runs SQL against D1 (remote, local, or local kept in `persistTo`) and returns the rows of the last statement. */
export function d1(sql, { remote = false, persistTo, timeoutMs } = {}) {
  const where = remote ? ["--remote"] : persistTo ? ["--local", "--persist-to", persistTo] : ["--local"];
  const out = wrangler(["d1", "execute", "DB", ...where, "--json", "--command", sql], { quiet: true, timeoutMs });
  const parsed = JSON.parse(out.slice(out.indexOf("[")));
  return parsed[parsed.length - 1]?.results ?? [];
}

export const sqlString = (s) => `'${String(s).replace(/'/g, "''")}'`;

/** A new API key as the Worker makes them: edk_ + 32 random bytes, stored as SHA-256 + last 4. */
export function newApiKey() {
  const key = "edk_" + randomBytes(32).toString("base64url");
  return { key, hash: createHash("sha256").update(key).digest("hex"), last4: key.slice(-4) };
}

export function keyHash(key) {
  return createHash("sha256").update(key).digest("hex");
}

/** Creates an organization and its first key in one D1 round trip; returns both. */
export function createOrganization(name, { remote = false, persistTo, timeoutMs } = {}) {
  const { key, hash, last4 } = newApiKey();
  const rows = d1(
    `INSERT INTO organizations (name) VALUES (${sqlString(name)});
     INSERT INTO api_keys (org_id, name, key_hash, key_last4) VALUES (last_insert_rowid(), 'initial', ${sqlString(hash)}, ${sqlString(last4)});
     SELECT org_id AS id FROM api_keys WHERE key_hash = ${sqlString(hash)};`,
    { remote, persistTo, timeoutMs },
  );
  return { orgId: rows[0]?.id, key };
}
