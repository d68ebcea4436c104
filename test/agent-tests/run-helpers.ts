// Starting a test run over the API and reading it once it finished: the POST answers at once (202, the run
// `running`) and the calls go on without the request, so a test follows the run as the dashboard does.
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

/**
 * POSTs a run and answers it finished, with every request that left the Worker meanwhile (the run's object and its
 * sessions run in this isolate too, so their fetches pass here): a test call must reach no carrier host.
 */
export async function runTestsSending(key: string, workflowId: number, body: Record<string, unknown>): Promise<{ run: any; sent: string[] }> {
  const sent: string[] = [];
  const real = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    sent.push(new Request(input, init).url);
    return real(input, init);
  }) as typeof fetch;
  try {
    return { run: await runTests(key, workflowId, body), sent };
  } finally {
    globalThis.fetch = real;
  }
}
