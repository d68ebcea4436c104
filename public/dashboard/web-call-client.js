// The browser's side of a web call (docs/web-calls.md), one mechanism for the agent page's three ways to talk:
//   speaking: the microphone through an AudioWorklet (mic-worklet.js: 16 kHz 16-bit PCM, 20 ms frames);
//   typing:   the caller's turns are typed ({"type":"text"}); the microphone still goes out when the browser gives
//             one (offline, the organization's recorded clips are still recognized), else the worklet is fed
//             silence, so the agent's audio (paced on the caller's audio clock) still flows and plays;
//   text-only (the playground): no AudioContext at all; silence sent by a timer, the agent's audio counted but not
//             played, and its marks echoed at once.
// The agent's audio is played in order, marks are echoed once the audio before them has played, `clear` drops what
// is queued (the caller talked over the agent), and transcript and state messages go to the page's handlers.
const RATE = 16000;
const FRAME_BYTES = 640; // 20 ms of 16-bit samples at 16 kHz

const ROLE = { agent: "Agent", user: "You", tool: "Action" };

/** One transcript message as a list item (`h`: the dashboard's element builder). */
export const turnItem = (h, t) => h("li", { class: t.role }, h("span", { class: "role" }, ROLE[t.role] ?? t.role), " ", t.text);

/** The call's audio out, for tests and a level meter: the loudest sample played (0..1) and the frames received. */
export const talkOutput = { peak: 0, frames: 0 };
globalThis.edgedialTalk = talkOutput;

/**
 * Opens the call's socket. `mode`: "speaking" | "typing" | "text-only". Handlers: onTurn(transcript message),
 * onState(state message), onOpen(), onEnd(reason). Returns { say(text), hangUp() }.
 */
export async function startCall(made, mode, { onTurn, onState = () => {}, onOpen, onEnd }) {
  const audio = mode === "text-only" ? null : await audioPath(mode === "speaking" ? "required" : "optional");
  const ws = new WebSocket(made.websocket_url);
  ws.binaryType = "arraybuffer";
  const send = (data) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(data);
  };
  let stopInput = () => {};
  if (audio) audio.worklet.port.onmessage = (e) => send(e.data);
  else stopInput = silenceTimer(send);

  let playhead = 0;
  let playing = new Set();
  let marks = new Set();
  let ended = false;

  const play = (bytes) => {
    talkOutput.frames++;
    const pcm = new Int16Array(bytes);
    for (let i = 0; i < pcm.length; i++) talkOutput.peak = Math.max(talkOutput.peak, Math.abs(pcm[i]) / 0x8000);
    if (!audio) return;
    const { ctx } = audio;
    const buf = ctx.createBuffer(1, pcm.length, RATE);
    const data = buf.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) data[i] = pcm[i] / 0x8000;
    const node = ctx.createBufferSource();
    node.buffer = buf;
    node.connect(ctx.destination);
    playhead = Math.max(playhead, ctx.currentTime + 0.05);
    node.start(playhead);
    playhead += buf.duration;
    playing.add(node);
    node.onended = () => playing.delete(node);
  };
  // A mark comes back once everything queued before it has played (at once where nothing is played).
  const mark = (name) => {
    const wait = audio ? Math.max(0, (playhead - audio.ctx.currentTime) * 1000) : 0;
    const timer = setTimeout(() => {
      marks.delete(timer);
      send(JSON.stringify({ type: "mark", name }));
    }, wait);
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
    stopInput();
    audio?.close();
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
    else if (m.type === "state") onState(m);
  };
  ws.onclose = (e) => finish(e.reason);
  ws.onerror = () => finish("connection failed");

  let typingSent = 0;
  return {
    /** A typed turn; false when the call is not connected. */
    say(text) {
      if (ws.readyState !== WebSocket.OPEN) return false;
      ws.send(JSON.stringify({ type: "text", text }));
      return true;
    },
    /** The caller is typing: at most every 2 s, so the agent's re-prompt and silence limits wait for the turn. */
    typing() {
      if (performance.now() - typingSent < 2000) return;
      typingSent = performance.now();
      send(JSON.stringify({ type: "typing" }));
    },
    hangUp() {
      send(JSON.stringify({ type: "stop" }));
      ws.close(1000, "hang up");
      finish("you hung up");
    },
  };
}

/** The AudioContext that plays the agent and, through the worklet, sends the microphone (or silence) as frames. */
async function audioPath(mic) {
  const ctx = new AudioContext();
  await ctx.audioWorklet.addModule(new URL("./mic-worklet.js", import.meta.url));
  const stream = await microphone().catch((err) => {
    if (mic === "required") {
      ctx.close();
      throw err;
    }
    return null; // typing: no microphone (refused, or none) is fine
  });
  // Without one, a constant zero is the caller's line: frames keep the audio clock going on the context's own clock.
  const source = stream ? ctx.createMediaStreamSource(stream) : new ConstantSourceNode(ctx, { offset: 0 });
  source.start?.();
  const worklet = new AudioWorkletNode(ctx, "mic-pcm16");
  // The worklet only runs while pulled: a silent path to the speakers keeps it going without an echo.
  const mute = ctx.createGain();
  mute.gain.value = 0;
  source.connect(worklet).connect(mute).connect(ctx.destination);
  return {
    ctx,
    worklet,
    close() {
      for (const track of stream?.getTracks() ?? []) track.stop();
      ctx.close();
    },
  };
}

const microphone = () =>
  navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });

/** Silence as 20 ms frames, as many as the clock says are due (a throttled timer catches up in one message). */
function silenceTimer(send) {
  let sentMs = performance.now();
  const timer = setInterval(() => {
    const frames = Math.min(50, Math.floor((performance.now() - sentMs) / 20));
    if (!frames) return;
    sentMs += frames * 20;
    send(new ArrayBuffer(frames * FRAME_BYTES));
  }, 100);
  return () => clearInterval(timer);
}
