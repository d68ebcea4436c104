// Helpers for the local scripts: run wrangler with this Node (>= 22.12 from node_modules) and talk to D1.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

export const WRANGLER = fileURLToPath(new URL("../../node_modules/wrangler/bin/wrangler.js", import.meta.url));

// A running `npm run dev` holds the local D1 SQLite file; a second writer then sees SQLITE_BUSY. Such a failure
// changed nothing (wrangler runs the statements as one batch), so it is retried after a growing, jittered pause.
const BUSY = /SQLITE_BUSY|database is locked/i;
const BUSY_ATTEMPTS = 8;

const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** The pause before retry `attempt` (1-based): 100 ms doubling to at most 3.2 s, with up to 50% jitter. */
export const busyBackoffMs = (attempt, random = Math.random) => Math.round(Math.min(3200, 100 * 2 ** (attempt - 1)) * (1 + random() / 2));

/** Runs wrangler to completion; stdin is not a TTY, so its confirmations take their default. */
export function wrangler(args, { quiet = false } = {}) {
  for (let attempt = 1; ; attempt++) {
    const res = spawnSync(process.execPath, [WRANGLER, ...args], {
      stdio: ["ignore", quiet ? "pipe" : "inherit", quiet ? "pipe" : "inherit"],
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    });
    if (res.status === 0) return res.stdout ?? "";
    const output = `${res.stdout ?? ""}${res.stderr ?? ""}`;
    if (quiet && BUSY.test(output) && attempt < BUSY_ATTEMPTS) {
      const ms = busyBackoffMs(attempt);
      process.stderr.write(`local D1 is busy (a running dev server?); retrying in ${ms} ms (${attempt}/${BUSY_ATTEMPTS - 1})\n`);
      sleepSync(ms);
      continue;
    }
    if (quiet) process.stderr.write(output);
    throw new Error(`wrangler ${args.join(" ")} failed (exit ${res.status})`);
  }
}

export function wranglerLive(args) {
  return spawn(process.execPath, [WRANGLER, ...args], { stdio: "inherit", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
}

/** Runs SQL against D1 (local or remote) and returns the rows of the last statement. */
export function d1(sql, { remote = false } = {}) {
  const out = wrangler(["d1", "execute", "DB", remote ? "--remote" : "--local", "--json", "--command", sql], { quiet: true });
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
export function createOrganization(name, { remote = false } = {}) {
  const { key, hash, last4 } = newApiKey();
  const rows = d1(
    `INSERT INTO organizations (name) VALUES (${sqlString(name)});
     INSERT INTO api_keys (org_id, name, key_hash, key_last4) VALUES (last_insert_rowid(), 'initial', ${sqlString(hash)}, ${sqlString(last4)});
     SELECT org_id AS id FROM api_keys WHERE key_hash = ${sqlString(hash)};`,
    { remote },
  );
  return { orgId: rows[0]?.id, key };
}
