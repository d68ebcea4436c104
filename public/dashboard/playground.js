// The agent page's text-only playground: the same web call as "Talk to this agent" (web-call-client.js, text-only:
// no microphone, nothing played), so the agent's graph runs turn by turn on the call session exactly as on a phone
// call. After each turn the session sends the agent's state, shown live: the current node (by its name in the
// definition), the path so far, the gathered values, the disposition, and the actions taken (tools, transfers, keys).
import { startCall, turnItem } from "./web-call-client.js";

export function playground(h, { agent, makeCall, showError }) {
  const names = new Map((agent.workflow_definition?.nodes ?? []).map((n) => [n.id, n.data?.name || n.id]));
  const nameOf = (nodeId) => names.get(nodeId) ?? nodeId ?? "—";
  const start = h("button", { type: "button", id: "playground-start" }, "Start the playground");
  const end = h("button", { type: "button", id: "playground-end", disabled: true }, "End");
  const status = h("p", { id: "playground-status", role: "status" }, "Not started.");
  const chat = h("ol", { id: "playground-chat", class: "transcript", "aria-label": "Playground conversation", "aria-live": "polite" });
  const node = h("output", { id: "playground-node" }, "—");
  const path = h("output", { id: "playground-path" }, "—");
  const gathered = h("ul", { id: "playground-gathered", "aria-label": "Gathered values" });
  const tools = h("ol", { id: "playground-tools", "aria-label": "Actions" });
  const disposition = h("output", { id: "playground-disposition" }, "—");
  const text = h("input", { type: "text", id: "playground-text", autocomplete: "off", maxlength: 1000, disabled: true, "aria-label": "Your message" });
  const send = h("button", { type: "submit", disabled: true }, "Send");
  const form = h("form", { class: "typed-turn" }, text, send);
  let call = null;
  const running = (on) => {
    start.disabled = on;
    end.disabled = !on;
    text.disabled = !on;
    send.disabled = !on;
  };

  const showState = (s) => {
    node.textContent = nameOf(s.node);
    path.textContent = s.nodes.map(nameOf).join(" → ");
    gathered.replaceChildren(
      ...Object.entries(s.gathered ?? {}).map(([k, v]) => h("li", {}, h("code", {}, k), ": ", typeof v === "string" ? v : JSON.stringify(v))),
    );
    disposition.textContent = s.disposition ?? "—";
    tools.replaceChildren(
      ...s.tool_calls.map((t) =>
        h(
          "li",
          { class: t.name === "transfer_call" ? "transfer" : null },
          h("code", {}, t.name),
          ` ${JSON.stringify(t.arguments)} → ${t.status}${t.http_status ? ` (HTTP ${t.http_status})` : ""}${t.error ? `: ${t.error}` : ""}`,
        ),
      ),
    );
  };

  start.addEventListener("click", async () => {
    running(true);
    end.disabled = true;
    status.textContent = "Starting…";
    chat.replaceChildren();
    try {
      const made = await makeCall();
      if (!made) {
        status.textContent = "Not started.";
        return running(false);
      }
      call = await startCall(made, "text-only", {
        onTurn: (t) => chat.append(turnItem(h, t)),
        onState: showState,
        onOpen: () => {
          status.textContent = `Running as ${made.workflow_run_name}: type the caller's turns.`;
          running(true);
          text.focus();
        },
        onEnd: (reason) => {
          status.textContent = `Ended${reason ? ` (${reason.replace(/_/g, " ")})` : ""}.`;
          running(false);
          call = null;
        },
      });
    } catch (err) {
      status.textContent = "Not started.";
      running(false);
      showError(err);
    }
  });
  end.addEventListener("click", () => call?.hangUp());
  text.addEventListener("input", () => call?.typing());
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const words = text.value.trim();
    if (words && call?.say(words)) text.value = "";
  });

  const element = h(
    "section",
    { class: "playground", "aria-labelledby": "playground-heading" },
    h("h2", { id: "playground-heading" }, "Playground (text only)"),
    h(
      "p",
      { class: "hint" },
      "The agent's graph turn by turn, typed, with no audio: the same call session as a phone call (recorded as a web call). Its node, values and actions update after each turn.",
    ),
    h("div", { class: "actions" }, start, end),
    status,
    h(
      "div",
      { class: "playground-grid" },
      h("div", {}, h("h3", {}, "Conversation"), chat, form),
      h("div", {}, liveFacts(h, { node, path, disposition, gathered, tools })),
    ),
  );
  return { element, leave: () => call?.hangUp() };
}

function liveFacts(h, { node, path, disposition, gathered, tools }) {
  return [
    h("h3", {}, "Live state"),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Node"),
      h("dd", {}, node),
      h("dt", {}, "Path"),
      h("dd", {}, path),
      h("dt", {}, "Disposition"),
      h("dd", {}, disposition),
    ),
    h("h4", {}, "Gathered values"),
    gathered,
    h("h4", {}, "Actions (tools, transfers, keys)"),
    tools,
  ];
}
