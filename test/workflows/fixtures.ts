// Definitions for the agent tests: a valid one, built fresh each time so a test can break exactly one rule.
export type Def = { nodes: any[]; edges: any[] };

export function validDefinition(): Def {
  return {
    nodes: [
      { id: "start", type: "startCall", data: { prompt: "Greet {{ first_name }} and ask about {{topic}}", greeting: "Hello {{first_name}}!" } },
      { id: "qualify", type: "agentNode", data: { prompt: "Qualify the lead for {{company}}" } },
      { id: "end-ok", type: "endCall", data: { prompt: "Thank them and hang up" } },
      { id: "end-no", type: "endCall", data: { prompt: "Apologise and hang up" } },
      { id: "global", type: "globalNode", data: { prompt: "Be polite" } },
      { id: "hook", type: "webhook", data: { url: "https://example.com/hook" } },
      { id: "trigger", type: "apiTrigger", data: { trigger_path: `path-${crypto.randomUUID()}` } },
    ],
    edges: [
      { id: "e1", source: "start", target: "qualify", data: { label: "interested", condition: "The caller wants to hear more" } },
      { id: "e2", source: "start", target: "end-no", data: { label: "not interested", condition: "The caller declines" } },
      { id: "e3", source: "qualify", target: "end-ok", data: { label: "done", condition: "Qualification finished" } },
    ],
  };
}

/** The smallest valid definition: a start and an end. */
export function minimalDefinition(): Def {
  return {
    nodes: [
      { id: "s", type: "startCall", data: { prompt: "Say hi" } },
      { id: "e", type: "endCall", data: { prompt: "Say bye" } },
    ],
    edges: [{ id: "s-e", source: "s", target: "e", data: { label: "bye", condition: "always" } }],
  };
}
