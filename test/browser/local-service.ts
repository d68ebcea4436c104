// What every browser file starts before its pages: a local D1 with one organization, edgedial (and the carrier
// simulator) under `wrangler dev`, as named, bounded steps. CI once saw manage.test.ts's whole beforeAll time out at
// 180 s (about 30 s on a quiet machine) with nothing saying which step stalled: each step now prints its time, fails
// on its own bound with its name, and a stalled Worker start is tried once more on a new port.
import { cpSync } from "node:fs";
import { inject } from "vitest";
import { unstable_startWorker } from "wrangler";
// @ts-expect-error: a plain JavaScript helper of the local scripts (no type declarations)
import { freePort } from "../../scripts/lib/sandbox-sim.mjs";
// @ts-expect-error: a plain JavaScript helper of the local scripts (no type declarations)
import { createOrganization } from "../../scripts/lib/wrangler.mjs";

export type Worker = Awaited<ReturnType<typeof unstable_startWorker>>;
type StartOptions = Parameters<typeof unstable_startWorker>[0];

/** Bindings as unstable_startWorker takes them: every value a plain-text variable. */
export const plain = (values: Record<string, string>) =>
  Object.fromEntries(Object.entries(values).map(([k, value]) => [k, { type: "plain_text" as const, value }]));

const say = (line: string) => process.stderr.write(`browser setup: ${line}\n`);

/** Runs `run(attempt)` within `ms`, at most `attempts` times; an abandoned attempt's late result goes to `dispose`. */
export async function setupStep<T>(
  name: string,
  opts: { ms: number; attempts?: number; dispose?: (late: T) => unknown },
  run: (attempt: number) => Promise<T>,
): Promise<T> {
  const attempts = opts.attempts ?? 1;
  for (let n = 1; ; n++) {
    const started = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const attempt = run(n);
    const stalled = new Promise<"stalled">((resolve) => {
      timer = setTimeout(() => resolve("stalled"), opts.ms);
    });
    try {
      const result = await Promise.race([attempt, stalled]);
      if (result !== "stalled") {
        say(`${name} in ${Date.now() - started} ms`);
        return result;
      }
    } finally {
      clearTimeout(timer);
    }
    attempt.then(
      (late) => opts.dispose?.(late),
      () => undefined,
    );
    const message = `${name} did not finish within ${opts.ms} ms (attempt ${n} of ${attempts})`;
    say(message);
    if (n >= attempts) throw new Error(`browser setup: ${message}`);
  }
}

/**
 * A local D1 in `state`, migrated (a copy of the suite's template, global-setup.ts), with one organization; returns
 * its API key. The synchronous child blocks this process's timers too, so it carries its own bound.
 */
export function localOrganization(state: string, name: string): string {
  const started = Date.now();
  cpSync(inject("migratedState"), state, { recursive: true });
  const { key } = createOrganization(name, { persistTo: state, timeoutMs: 60_000 });
  say(`organization "${name}" made in a migrated D1 in ${Date.now() - started} ms`);
  return key;
}

/**
 * Starts a Worker on a free local port and waits until it is ready; `options(origin)` builds its options for that
 * origin (PUBLIC_BASE_URL). Tried twice, 90 s each, on a new port the second time.
 */
export async function startLocalWorker(name: string, options: (origin: string, port: number) => StartOptions): Promise<{ worker: Worker; origin: string }> {
  return setupStep(name, { ms: 90_000, attempts: 2, dispose: ({ worker }) => worker.dispose().catch(() => undefined) }, async () => {
    const port: number = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const worker = await unstable_startWorker(options(origin, port));
    await worker.ready;
    return { worker, origin };
  });
}
