// Global setup of the Node integration suite: Asterisk must answer. One already running (.ci/integration starts the
// peers) is used as is; otherwise the peers are started from their chroot as the Workers-pool suite does
// (../peers.global.ts). Without a chroot to start them from, the suite is skipped, saying so.
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import startPeers from "../peers.global";
import { ARI, ariAnswers } from "./restart-support";

const root = process.env.EDGEDIAL_PEERS_ROOT ?? join(tmpdir(), "peers/sid");

export default async function setup(project: TestProject) {
  let stop: (() => void) | undefined;
  if (!(await ariAnswers()) && existsSync(`${root}/usr/sbin/asterisk`)) stop = await startPeers();
  // ARI's recordings go here; the chroot's package does not create it.
  if (existsSync(`${root}/var/spool/asterisk`)) mkdirSync(`${root}/var/spool/asterisk/recording`, { recursive: true });
  const up = await ariAnswers();
  if (!up) console.log(`integration (node): SKIPPED: no Asterisk answers at ${ARI} and there is no peers chroot at ${root} to start one from`);
  project.provide("asterisk", up);
  return stop;
}

declare module "vitest" {
  export interface ProvidedContext {
    asterisk: boolean;
  }
}
