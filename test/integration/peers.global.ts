// Global setup of the integration suite (runs in Node): makes sure the S3 peer answers. A peer already running is
// used as is; otherwise it is started from the peers chroot (built once by setup-peers.sh) and stopped afterwards.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const endpoint = process.env.EDGEDIAL_S3_ENDPOINT ?? "http://127.0.0.1:7480";
const peersDir = resolve(process.env.EDGEDIAL_PEERS_DIR ?? "../shared/tools/peers");
// .ci/integration exports both; run alone, the same defaults under the temporary directory.
const root = process.env.EDGEDIAL_PEERS_ROOT ?? join(tmpdir(), "peers/sid");
const run = process.env.EDGEDIAL_PEERS_RUN ?? join(tmpdir(), "peers/run");

async function answers(): Promise<boolean> {
  try {
    const res = await fetch(endpoint, { signal: AbortSignal.timeout(2000) });
    return res.status > 0;
  } catch {
    return false;
  }
}

/** Where ARI's recordings go: the chroot's Asterisk package does not create it, and a recording there fails without it. */
function recordingsDir() {
  if (existsSync(`${root}/var/spool/asterisk`)) mkdirSync(`${root}/var/spool/asterisk/recording`, { recursive: true });
}

export default async function setup() {
  recordingsDir();
  if (await answers()) return;
  const start = resolve(peersDir, "start-peers.sh");
  if (!existsSync(start) || !existsSync(`${root}/usr/bin/radosgw`)) {
    throw new Error(
      `The S3 peer does not answer at ${endpoint}, and there is no peers chroot at ${root} to start it from.\n` +
        `Build it once: ${resolve(peersDir, "setup-peers.sh")} ${root}   (needs root)\n` +
        `then start it: ${start} ${root} ${run}`,
    );
  }
  console.log(`integration: starting the peers from ${root}`);
  execFileSync(start, [root, run], { stdio: "inherit" });
  if (!(await answers())) throw new Error(`The S3 peer still does not answer at ${endpoint}`);
  return () => {
    console.log("integration: stopping the peers this run started");
    execFileSync(resolve(peersDir, "stop-peers.sh"), [root, run], { stdio: "inherit" });
  };
}
