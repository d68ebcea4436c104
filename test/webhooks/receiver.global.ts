// Global setup (runs in Node): a webhook receiver on 127.0.0.1 for test/webhooks/queue.test.ts, so a delivery can go
// the whole way (the WEBHOOKS queue, the Worker's queue handler, a real request). POST /hook/{key}?status=N records
// the request under the key and answers N (default 200); GET /_log?key=... answers what was recorded.
import { createServer } from "node:http";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    webhookReceiverPort: number;
  }
}

type Seen = { headers: Record<string, string>; body: string; answered: number };

export default async function setup(project: TestProject) {
  const log = new Map<string, Seen[]>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://receiver");
    if (req.method === "GET" && url.pathname === "/_log") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(JSON.stringify(log.get(url.searchParams.get("key") ?? "") ?? []));
    }
    const key = /^\/hook\/([\w-]+)$/.exec(url.pathname)?.[1];
    if (req.method !== "POST" || !key) {
      res.writeHead(404);
      return res.end();
    }
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const answered = Number(url.searchParams.get("status") ?? 200);
      const seen = log.get(key) ?? [];
      seen.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(parts).toString("utf8"), answered });
      log.set(key, seen);
      res.writeHead(answered);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  project.provide("webhookReceiverPort", typeof address === "object" && address ? address.port : 0);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}
