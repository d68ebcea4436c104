// Global setup (runs in Node): the local speech server of `npm run dev` (scripts/lib/local-speech.mjs, eSpeak NG from
// npm) on 127.0.0.1, for test/agent/local-speech.test.ts. No other test names it: the suites' agents speak in tones.
import type { TestProject } from "vitest/node";
import { startLocalSpeech } from "../../scripts/lib/local-speech.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    localSpeechUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // Compiled at the first request: the runs that never ask pay nothing.
  const server = await startLocalSpeech({ warm: false });
  project.provide("localSpeechUrl", server.url);
  return () => server.close();
}
