// Global setup (runs in Node): a customer's system for the agent's HTTP tools on 127.0.0.1, for
// test/calls/agent-tools.test.ts. Any request to /tool/{key} is recorded under the key (method, query, headers, body)
// and answered as its query says: delay=ms before answering, status=N (default 200); the answer is JSON naming what
// was asked. GET /_log?key=... answers what was recorded.
import { createServer } from "node:http";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    toolStandinPort: number;
  }
}

type Seen = { method: string; query: Record<string, string>; headers: Record<string, string>; body: string };

export default async function setup(project: TestProject) {
  const log = new Map<string, Seen[]>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://standin");
    if (req.method === "GET" && url.pathname === "/_log") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(JSON.stringify(log.get(url.searchParams.get("key") ?? "") ?? []));
    }
    const key = /^\/tool\/([\w-]+)$/.exec(url.pathname)?.[1];
    if (!key) {
      res.writeHead(404);
      return res.end();
    }
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const seen: Seen = {
        method: req.method ?? "",
        query: Object.fromEntries(url.searchParams),
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(parts).toString("utf8"),
      };
      log.set(key, [...(log.get(key) ?? []), seen]);
      const status = Number(url.searchParams.get("status") ?? 200);
      setTimeout(
        () => {
          if (res.destroyed) return;
          res.writeHead(status, { "Content-Type": "application/json" });
          res.end(JSON.stringify(status < 400 ? { order: "A17", status: "ships tomorrow" } : { error: "database down" }));
        },
        Number(url.searchParams.get("delay") ?? 0),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  project.provide("toolStandinPort", typeof address === "object" && address ? address.port : 0);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}
