// Runs in Node before the suite: the committed speech clips (espeak-ng, converted with sox; test/fixtures/audio)
// read from disk and handed to the tests in workerd, which cannot read files, as base64.
import { readdirSync, readFileSync } from "node:fs";
import type { TestProject } from "vitest/node";

// vitest runs global setups from the project root.
const DIR = "test/fixtures/audio/";

declare module "vitest" {
  export interface ProvidedContext {
    audioClips: Record<string, string>;
  }
}

export default function setup(project: TestProject) {
  const clips: Record<string, string> = {};
  for (const name of readdirSync(DIR)) if (name.endsWith(".wav")) clips[name] = readFileSync(DIR + name).toString("base64");
  project.provide("audioClips", clips);
}
