// An agent's page with "Talk to this agent": a web call from the browser (docs/web-calls.md). POST
// /workflow/{id}/web-call gives a single-use WebSocket URL; the microphone goes out through an AudioWorklet
// (mic-worklet.js: 16 kHz 16-bit PCM, 20 ms frames), the agent's audio comes back in the same format and is played
// in order on an AudioContext, marks are echoed once the audio before them has played, `clear` drops what is queued
// (the caller talked over the agent), and each transcript message is added to the live transcript.
const RATE = 16000;

/** The call's audio out, for tests and a level meter: the loudest sample the page has played (0..1). */
export const talkOutput = { peak: 0, frames: 0 };
globalThis.edgedialTalk = talkOutput;

export async function agentPage(id, { main, h, page, load, api, showError }) {
  main.replaceChildren(page("Agent", h("p", {}, "Loading…")));
  const agent = await load(`/workflow/fetch/${id}`);
  const status = h("p", { id: "talk-status", role: "status" }, "Not connected.");
  const transcript = h("ol", { id: "talk-transcript", class: "transcript", "aria-label": "Live transcript", "aria-live": "polite" });
  const talk = h("button", { type: "button", class: "primary", id: "talk" }, "Talk to this agent");
  const hangUp = h("button", { type: "button", id: "hang-up", disabled: true }, "Hang up");
  let call = null;

  talk.addEventListener("click", async () => {
    talk.disabled = true;
    status.textContent = "Connecting…";
    transcript.replaceChildren();
    try {
      const made = await api(`/workflow/${id}/web-call`, { method: "POST", json: { initial_context: agent.template_context_variables ?? {} } });
      call = await startCall(made, {
        onTurn: (t) =>
          transcript.append(
            h("li", { class: t.role === "agent" ? "agent" : "user" }, h("span", { class: "role" }, t.role === "agent" ? "Agent" : "You"), " ", t.text),
          ),
        onOpen: () => {
          status.textContent = "Connected: speak to the agent.";
          hangUp.disabled = false;
        },
        onEnd: (reason) => {
          status.textContent = `Call ended${reason ? ` (${reason.replace(/_/g, " ")})` : ""}.`;
          hangUp.disabled = true;
          talk.disabled = false;
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

  main.replaceChildren(
    page(agent.name),
    h("p", {}, `Version ${agent.version_number} · ${agent.status}`),
    h(
      "section",
      { class: "talk", "aria-labelledby": "talk-heading" },
      h("h2", { id: "talk-heading" }, "Talk to this agent"),
      h("p", {}, "Uses your microphone. The call is recorded and listed with the agent's calls, as a web call."),
      h("div", { class: "actions" }, talk, hangUp),
      status,
      h("h3", {}, "Live transcript"),
      transcript,
    ),
  );
  // Leaving the page hangs up.
  return () => call?.hangUp();
}

async function startCall(made, { onTurn, onOpen, onEnd }) {
  const ctx = new AudioContext();
  await ctx.audioWorklet.addModule(new URL("./mic-worklet.js", import.meta.url));
  const mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
  const ws = new WebSocket(made.websocket_url);
  ws.binaryType = "arraybuffer";

  const source = ctx.createMediaStreamSource(mic);
  const worklet = new AudioWorkletNode(ctx, "mic-pcm16");
  // The worklet only runs while pulled: a silent path to the speakers keeps it going without an echo.
  const mute = ctx.createGain();
  mute.gain.value = 0;
  source.connect(worklet).connect(mute).connect(ctx.destination);
  worklet.port.onmessage = (e) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(e.data);
  };

  let playhead = 0;
  let playing = new Set();
  let marks = new Set();
  let ended = false;

  const play = (bytes) => {
    const pcm = new Int16Array(bytes);
    const buf = ctx.createBuffer(1, pcm.length, RATE);
    const data = buf.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) {
      data[i] = pcm[i] / 0x8000;
      const level = Math.abs(data[i]);
      if (level > talkOutput.peak) talkOutput.peak = level;
    }
    talkOutput.frames++;
    const node = ctx.createBufferSource();
    node.buffer = buf;
    node.connect(ctx.destination);
    playhead = Math.max(playhead, ctx.currentTime + 0.05);
    node.start(playhead);
    playhead += buf.duration;
    playing.add(node);
    node.onended = () => playing.delete(node);
  };
  // A mark comes back once everything queued before it has played.
  const mark = (name) => {
    const timer = setTimeout(
      () => {
        marks.delete(timer);
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "mark", name }));
      },
      Math.max(0, (playhead - ctx.currentTime) * 1000),
    );
    marks.add(timer);
  };
  const clear = () => {
    for (const node of playing) node.stop();
    for (const timer of marks) clearTimeout(timer);
    playing = new Set();
    marks = new Set();
    playhead = 0;
  };
  const finish = (reason) => {
    if (ended) return;
    ended = true;
    clear();
    for (const track of mic.getTracks()) track.stop();
    ctx.close();
    onEnd(reason);
  };

  ws.onopen = () => {
    ws.send(JSON.stringify({ type: "start" }));
    onOpen();
  };
  ws.onmessage = (e) => {
    if (typeof e.data !== "string") return play(e.data);
    const m = JSON.parse(e.data);
    if (m.type === "mark") mark(m.name);
    else if (m.type === "clear") clear();
    else if (m.type === "transcript") onTurn(m);
  };
  ws.onclose = (e) => finish(e.reason);
  ws.onerror = () => finish("connection failed");

  return {
    hangUp() {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "stop" }));
      ws.close(1000, "hang up");
      finish("you hung up");
    },
  };
}
