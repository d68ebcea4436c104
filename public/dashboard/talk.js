// An agent's page: its test values (the template variables a call needs, prefilled from the last values used in this
// browser, else the agent's defaults), "Talk to this agent" and the text-only playground (playground.js), both one
// web call (docs/web-calls.md, web-call-client.js). GET /workflow/{id}/web-call names the variables and whether the
// agent's engines understand speech: if so the caller speaks (and may type), else (offline engines) the caller types
// and the agent still answers in voice and text.
import { clearFieldErrors, field, placeErrors, setFieldError, Superseded } from "./core.js";
import { playground } from "./playground.js";
import { startCall, turnItem } from "./web-call-client.js";

export { talkOutput } from "./web-call-client.js";

const lastValuesKey = (id) => `edgedial.talk.${id}`;

export async function agentPage(id, { main, h, page, load, api, showError }) {
  main.replaceChildren(page("Agent", h("p", {}, "Loading…")));
  const agent = await load(`/workflow/fetch/${id}`);
  let setup = { variables: [], input_mode: "speech" };
  let setupProblem = null;
  try {
    setup = await load(`/workflow/${id}/web-call`);
    // An archived agent, or one whose definition is invalid: the page says why a call would be refused.
    if (setup.refused) setupProblem = new Error(setup.refused);
  } catch (err) {
    if (err instanceof Superseded) throw err;
    setupProblem = err;
  }
  const typing = setup.input_mode === "text";
  const vars = variablesForm(h, id, setup.variables);

  /** A web call with the test values, or null (a value missing: marked at its field). */
  async function makeCall() {
    const context = vars.read();
    if (!context) return null;
    try {
      return await api(`/workflow/${id}/web-call`, { method: "POST", json: { initial_context: context } });
    } catch (err) {
      placeErrors(err, (loc) => (loc[1] === "initial_context" && loc[2] ? `var-${loc[2]}` : null));
      return null;
    }
  }

  const status = h("p", { id: "talk-status", role: "status" }, "Not connected.");
  const transcript = h("ol", { id: "talk-transcript", class: "transcript", "aria-label": "Live transcript", "aria-live": "polite" });
  const talk = h("button", { type: "button", class: "primary", id: "talk" }, "Talk to this agent");
  const hangUp = h("button", { type: "button", id: "hang-up", disabled: true }, "Hang up");
  const text = h("input", { type: "text", autocomplete: "off", maxlength: 1000, disabled: true });
  const send = h("button", { type: "submit", disabled: true }, "Send");
  const typed = h("form", { class: "typed-turn", "aria-label": "Type a turn" }, field("talk-text", "Your turn (typed)", text), send);
  let call = null;
  const connected = (on) => {
    hangUp.disabled = !on;
    text.disabled = !on;
    send.disabled = !on;
    talk.disabled = on;
  };

  talk.addEventListener("click", async () => {
    talk.disabled = true;
    status.textContent = "Connecting…";
    transcript.replaceChildren();
    try {
      const made = await makeCall();
      if (!made) {
        status.textContent = "Not connected.";
        talk.disabled = false;
        return;
      }
      call = await startCall(made, made.input_mode === "text" ? "typing" : "speaking", {
        onTurn: (t) => transcript.append(turnItem(h, t)),
        onOpen: () => {
          status.textContent = made.input_mode === "text" ? "Connected: type your turns below." : "Connected: speak to the agent, or type.";
          connected(true);
          if (made.input_mode === "text") text.focus();
        },
        onEnd: (reason) => {
          status.textContent = `Call ended${reason ? ` (${reason.replace(/_/g, " ")})` : ""}.`;
          connected(false);
          call = null;
        },
      });
    } catch (err) {
      status.textContent = "Not connected.";
      talk.disabled = false;
      showError(err);
    }
  });
  hangUp.addEventListener("click", () => call?.hangUp());
  text.addEventListener("input", () => call?.typing());
  typed.addEventListener("submit", (e) => {
    e.preventDefault();
    const words = text.value.trim();
    if (words && call?.say(words)) text.value = "";
  });

  const lab = playground(h, { agent, makeCall, showError });
  main.replaceChildren(
    page(agent.name),
    h("p", {}, `Version ${agent.version_number} · ${agent.status}`),
    // replaceChildren would write a null as text: an empty paragraph instead.
    h("p", { class: "hint", hidden: !setupProblem }, setupProblem ? `Calls are refused: ${setupProblem.message}` : ""),
    vars.element,
    h(
      "section",
      { class: "talk", "aria-labelledby": "talk-heading" },
      h("h2", { id: "talk-heading" }, "Talk to this agent"),
      h(
        "p",
        { id: "talk-mode" },
        typing
          ? "Mode: typing (offline engines don't understand speech). The agent answers in voice and text; the microphone, if allowed, is heard only for the organization's recorded clips."
          : "Mode: speaking (the agent's engines understand speech; you may also type). Uses your microphone.",
      ),
      h("p", { class: "hint" }, "The call is recorded and listed with the agent's calls, as a web call."),
      h("div", { class: "actions" }, talk, hangUp),
      status,
      typed,
      h("h3", {}, "Live transcript"),
      transcript,
    ),
    lab.element,
  );
  // Leaving the page hangs up.
  return () => {
    call?.hangUp();
    lab.leave();
  };
}

/** The template variables as fields; read() gives the call's initial_context (remembered here) or null. */
function variablesForm(h, id, variables) {
  let last = {};
  try {
    last = JSON.parse(localStorage.getItem(lastValuesKey(id)) ?? "{}") ?? {};
  } catch {
    last = {};
  }
  const inputs = variables.map((v) => {
    const input = h("input", { type: "text", autocomplete: "off", value: last[v.name] ?? v.default ?? "", required: v.default === null });
    return { v, input, el: field(`var-${v.name}`, v.name, input, v.default === null ? "Needed: the agent has no default." : `Default: ${v.default}`) };
  });
  const element = h(
    "section",
    { class: "test-values", "aria-labelledby": "vars-heading" },
    h("h2", { id: "vars-heading" }, "Test values"),
    inputs.length
      ? h("p", { class: "hint" }, "The template variables the agent's prompts and greeting use, for a call from this page.")
      : h("p", { class: "hint" }, "This agent uses no template variables."),
    inputs.map((i) => i.el),
  );
  return {
    element,
    read() {
      clearFieldErrors(element);
      const context = {};
      let firstBad = null;
      for (const { v, input } of inputs) {
        const value = input.value.trim();
        if (value) context[v.name] = value;
        else if (v.default === null) {
          setFieldError(`var-${v.name}`, `Give a value: the agent uses {{${v.name}}}.`);
          firstBad ??= input;
        }
      }
      if (firstBad) {
        firstBad.focus();
        return null;
      }
      localStorage.setItem(lastValuesKey(id), JSON.stringify(context));
      return context;
    },
  };
}
