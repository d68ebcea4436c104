// The agent's engines and voice as a small form over workflow_configurations.voice_agent: for the model, speech to
// text and text to speech, a provider and its model, key, address or voice. It writes into the configurations JSON
// (the one source the editor saves), so options it does not offer (turn-taking, scripted engines) are kept.
import { field, h } from "./core.js";

const PARTS = {
  llm: { label: "Language model", providers: ["workers-ai", "openai"], extra: ["model", "base_url", "api_key"] },
  stt: { label: "Speech to text", providers: ["workers-ai", "deepgram", "elevenlabs"], extra: ["model", "api_key"] },
  tts: { label: "Text to speech", providers: ["workers-ai", "deepgram", "elevenlabs"], extra: ["model", "voice", "api_key"] },
};
const LABELS = { model: "Model", base_url: "API address (OpenAI-compatible)", api_key: "API key", voice: "Voice" };

/** `read()` gives the configurations object (or null when its JSON is broken), `write(obj)` stores it back. */
export function voiceForm(read, write) {
  const voice = () => read()?.voice_agent ?? {};
  const box = h("fieldset", { class: "row-card" }, h("legend", {}, "Engines and voice"));
  const update = (part, key, value) => {
    const conf = read();
    if (!conf) return;
    const va = { ...(conf.voice_agent ?? {}) };
    const cur = { ...(va[part] ?? {}) };
    if (key === "provider") {
      if (!value) delete va[part];
      else va[part] = { provider: value };
    } else {
      if (value) cur[key] = value;
      else delete cur[key];
      va[part] = cur;
    }
    if (Object.keys(va).length) conf.voice_agent = va;
    else delete conf.voice_agent;
    write(conf);
  };
  const render = () => {
    const current = voice();
    box.replaceChildren(
      box.firstChild,
      h("p", { class: "hint" }, "Left at the default, the agent runs on Workers AI. A stored key is shown masked; leave it to keep it."),
      ...Object.entries(PARTS).map(([part, spec]) => {
        const cfg = current[part] ?? {};
        const select = h(
          "select",
          { onchange: (e) => (update(part, "provider", e.target.value), render()) },
          h("option", { value: "" }, "Default (Workers AI)"),
          [...new Set([...spec.providers, ...(cfg.provider ? [cfg.provider] : [])])].map((p) => h("option", { value: p, selected: p === cfg.provider }, p)),
        );
        const extras = cfg.provider && cfg.provider !== "scripted" ? spec.extra.filter((k) => !(k === "base_url" && cfg.provider !== "openai")) : [];
        return h(
          "div",
          { class: "voice-part" },
          field(`voice-${part}-provider`, spec.label, select),
          ...extras
            .filter((k) => !(k === "api_key" && cfg.provider === "workers-ai"))
            .map((k) =>
              field(
                `voice-${part}-${k}`,
                `${spec.label}: ${LABELS[k]}`,
                h("input", {
                  type: k === "api_key" ? "password" : "text",
                  autocomplete: "off",
                  value: cfg[k] ?? "",
                  onchange: (e) => update(part, k, e.target.value.trim()),
                }),
              ),
            ),
        );
      }),
    );
  };
  render();
  return { element: box, render };
}
