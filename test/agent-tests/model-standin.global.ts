// Global setup (runs in Node): stand-in OpenAI-compatible caller and judge models on 127.0.0.1, for
// test/agent-tests/persona.test.ts. POST /v1/chat/completions streams its answer as server-sent events:
//   - a persona (a system prompt that is not the judge's): the persona prompt's quoted lines ("…"), the next one
//     after the caller's lines so far (the chat's assistant messages), then [END];
//   - the judge (a system prompt starting "You judge"): a criterion passes when every quoted word of it ("…") is in
//     the transcript, and the reasoning says which was found or missing.
//   - an agent's own model (a key given a script by POST /_script?key=…, the body a scripted model's steps): the
//     scripted model's step for the chat (src/agent/scripted-model.ts, as a scripted agent would answer), streamed in
//     OpenAI's wire shape, its tool calls as `tool_calls` deltas.
// A bearer key starting "fail" answers 503. Every request is recorded under its key: GET /_log?key=… reads them.
import { createServer } from "node:http";
import type { TestProject } from "vitest/node";
import type { ScriptStep } from "../../src/agent/scripted-model";
import { scriptedAnswer, type WireChat, type WireMessage } from "./scripted-wire";

declare module "vitest" {
  export interface ProvidedContext {
    modelStandinPort: number;
  }
}

type Message = WireMessage;
const quoted = (text: string) => [...text.matchAll(/"([^"]+)"/g)].map((m) => m[1]);

function reply(messages: Message[]): string {
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  const ask = (m: Message) => m.content ?? "";
  if (system.startsWith("You judge")) {
    const question = ask(messages.find((m) => m.role === "user") ?? { role: "user", content: "" });
    const [, criterion = "", transcript = ""] = /^Criterion: ([\s\S]*?)\n\nTranscript:\n([\s\S]*)$/.exec(question) ?? [];
    const words = quoted(criterion);
    const missing = words.filter((w) => !transcript.toLowerCase().includes(w.toLowerCase()));
    return JSON.stringify(
      missing.length || !words.length
        ? { passed: false, reasoning: `The transcript never mentions ${missing.map((w) => `"${w}"`).join(", ") || "anything the criterion names"}.` }
        : { passed: true, reasoning: `The transcript mentions ${words.map((w) => `"${w}"`).join(", ")}.` },
    );
  }
  const said = messages.filter((m) => m.role === "assistant").length;
  return quoted(system)[said] ?? "[END]";
}

/** The agent's answer as OpenAI's streamed chunks: its words as content deltas, each tool call as a tool_calls delta. */
async function agentChunks(script: ScriptStep[], sent: WireChat): Promise<unknown[]> {
  const { text, calls } = await scriptedAnswer(script, sent);
  return [
    ...text.map((t) => ({ choices: [{ index: 0, delta: { content: t } }] })),
    ...calls.map((c, index) => ({
      choices: [
        { index: 0, delta: { tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } }] } },
      ],
    })),
  ];
}

export default async function setup(project: TestProject) {
  const log = new Map<string, unknown[]>();
  const scripts = new Map<string, ScriptStep[]>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://standin");
    if (req.method === "POST" && url.pathname === "/_script") {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        scripts.set(url.searchParams.get("key") ?? "", JSON.parse(Buffer.concat(parts).toString()) as ScriptStep[]);
        res.writeHead(204);
        res.end();
      });
      return;
    }
    if (req.method === "GET" && url.pathname === "/_log") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(JSON.stringify(log.get(url.searchParams.get("key") ?? "") ?? []));
    }
    if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
      res.writeHead(404);
      return res.end();
    }
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      const sent = JSON.parse(Buffer.concat(parts).toString() || "{}") as { model?: string; messages?: Message[]; stream?: boolean };
      if (!log.has(key)) log.set(key, []);
      log.get(key)?.push(sent);
      if (key.startsWith("fail")) {
        res.writeHead(503, { "Content-Type": "application/json" });
        return res.end(JSON.stringify({ error: { message: "The stand-in model is overloaded.", type: "server_error" } }));
      }
      if (!sent.model || !Array.isArray(sent.messages) || sent.stream !== true) {
        res.writeHead(400, { "Content-Type": "application/json" });
        return res.end(JSON.stringify({ error: { message: "model, messages and stream: true are required" } }));
      }
      const script = scripts.get(key);
      if (script) {
        void agentChunks(script, sent as WireChat).then((chunks) => {
          res.writeHead(200, { "Content-Type": "text/event-stream" });
          for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
          res.end("data: [DONE]\n\n");
        });
        return;
      }
      const text = reply(sent.messages);
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      // In two pieces, as a streamed answer comes.
      const cut = Math.ceil(text.length / 2);
      for (const piece of [text.slice(0, cut), text.slice(cut)])
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  project.provide("modelStandinPort", typeof address === "object" && address ? address.port : 0);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}
