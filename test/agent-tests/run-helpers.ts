// Starting a test run over the API and reading it once it finished: the POST answers at once (202, the run
// `running`) and the calls go on without the request, so a test follows the run as the dashboard does.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../helpers";

export async function finishedRun(key: string, workflowId: number, id: number, boundMs = 150_000): Promise<any> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const res = await call("GET", `/api/v1/workflow/${workflowId}/tests/runs/${id}`, { key });
    expect(res.status, res.text).toBe(200);
    if (res.json.status !== "running") return res.json;
    if (Date.now() > deadline) throw new Error(`test run ${id} still running after ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** POSTs a run and answers it finished. */
export async function runTests(key: string, workflowId: number, body: Record<string, unknown>): Promise<any> {
  const res = await call("POST", `/api/v1/workflow/${workflowId}/tests/runs`, { key, body });
  expect([200, 202], res.text).toContain(res.status);
  return finishedRun(key, workflowId, res.json.id);
}

/** What every fetch that leaves this isolate passes through while a run is followed: one wrapper for all listeners. */
const listeners = new Set<(url: string) => void>();
let unwrapped: typeof fetch | null = null;

function listen(fn: (url: string) => void): () => void {
  if (!unwrapped) {
    const real = globalThis.fetch;
    unwrapped = real;
    globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
      // The URL only: building a Request here would take the body (a stream) the real fetch is about to send.
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      for (const l of listeners) l(url);
      return real(input, init);
    }) as typeof fetch;
  }
  listeners.add(fn);
  return () => {
    listeners.delete(fn);
    if (!listeners.size && unwrapped) {
      globalThis.fetch = unwrapped;
      unwrapped = null;
    }
  };
}

/**
 * POSTs a run and answers it finished, with every request that left the Worker meanwhile (the run's object and its
 * sessions run in this isolate too, so their fetches pass here): a test call must reach no carrier host. Tests of a
 * file may follow runs at once (each sees the others' requests too: none may reach a carrier). Requests about a
 * carrier call placed before the run began are left out: a call another test file left behind in this runtime
 * (vitest.config.ts: files share it) may still be hung up at its carrier meanwhile.
 */
export async function runTestsSending(key: string, workflowId: number, body: Record<string, unknown>): Promise<{ run: any; sent: string[] }> {
  const before = await env.DB.prepare("SELECT COALESCE(MAX(id), 0) AS id FROM workflow_runs").first<{ id: number }>();
  const sent: string[] = [];
  const stop = listen((url) => sent.push(url));
  let run: any;
  try {
    run = await runTests(key, workflowId, body);
  } finally {
    stop();
  }
  const { results } = await env.DB.prepare("SELECT provider_call_id FROM workflow_runs WHERE id <= ? AND provider_call_id IS NOT NULL")
    .bind(before!.id)
    .all<{ provider_call_id: string }>();
  const older = results.map((r) => r.provider_call_id);
  return { run, sent: sent.filter((url) => !older.some((callId) => url.includes(callId))) };
}
