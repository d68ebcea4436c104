// bench/scale's arithmetic: from what N measured calls cost (scale.bench.test.ts's SCALE_RESULT) to one reference
// call (3 minutes, a reply every 5 s: capacity/demand.ts's pace), then to a deployment at 1,000 concurrent calls and at
// a million calls a day, against Cloudflare's documented limits and prices. Pure; the figures' sources are in
// docs/scale.md, beside the table this prints.
import { latencyColumn } from "../../src/calls/session/latency-record.ts";
import { longCall, random } from "../../test/calls/long-calls.ts";

export type Measured = {
  calls: number;
  turns_per_call: number;
  d1: { statements: number; writeStatements: number; rowsWritten: number; rowsRead: number; bytesAdded: number };
  r2: { classA: number; classB: number };
  queueMessages: number;
  durableObjects: Record<string, number>;
  alarms: Record<string, number>;
  fetches: Record<string, number>;
  r2BytesAdded: { details: number; recordings: number };
  benchStatements: number;
  benchSessionRpcs: number;
  carrierFramesIn: number;
  workerRequests: number;
  d1RunRowBytes: Record<string, number>;
  /** Per D1 table: rows and bytes of their values added during the measured calls. */
  d1Tables: Record<string, { rows: number; bytes: number }>;
  engineRequests: Record<string, number>;
};

/** The reference call: three minutes in conversation, the model asked every 5 s. */
export const REFERENCE = { seconds: 180, replies: 36, calleeTurns: 36 };

/**
 * The run row's `latency` column for the reference call's replies: a histogram per figure, bounded whatever the
 * call's length (src/calls/session/latency-record.ts), so it is not scaled per reply from a short measured call but
 * built from 36 replies of plausible spread (the latency-column test's generator).
 */
export const REFERENCE_LATENCY_BYTES = JSON.stringify(latencyColumn(longCall(REFERENCE.replies, random(38)))).length;

/** Cloudflare's documented limits (docs/scale.md names each page). */
export const LIMITS = {
  d1DatabaseBytes: 10e9,
  /** A D1 database runs one query at a time: at ~1 ms a query, about 1,000 queries a second. */
  d1QueriesPerSecond: 1000,
  durableObjectRequestsPerSecond: 1000,
  queueMessagesPerSecond: 5000,
  workersAiRpm: { "text-generation": 300, asr: 720, tts: 720, turn: 720 } as Record<string, number>,
  workersAiFreeNeuronsPerDay: 10_000,
};

/** Prices in US dollars (Workers Paid, as docs/deployment.md lists them; Workers AI per model). */
export const PRICES = {
  workerRequestPerM: 0.3,
  doRequestPerM: 0.15,
  doGbSecondPerM: 12.5,
  /** A call session's memory as Durable Objects bill duration: 128 MB whatever it uses. */
  doGb: 0.128,
  /** Incoming WebSocket messages are billed as requests at 20 to 1. */
  wsMessagesPerRequest: 20,
  d1RowWrittenPerM: 1.0,
  d1RowReadPerM: 0.001,
  d1GbMonth: 0.75,
  r2GbMonth: 0.015,
  r2ClassAPerM: 4.5,
  r2ClassBPerM: 0.36,
  /** A message is three operations (write, read, delete) per 64 KB. */
  queueOpPerM: 0.4,
  neuronPerK: 0.011,
  /** llama-3.3-70b-instruct-fp8-fast: neurons per million input and output tokens. */
  llmInputNeuronsPerM: 26668,
  llmOutputNeuronsPerM: 204805,
  /** nova-3 over its WebSocket, per audio minute; aura-1 per 1,000 characters; smart-turn-v2 per audio minute. */
  sttNeuronsPerMinute: 836.36,
  ttsNeuronsPer1kChars: 1363.64,
  turnNeuronsPerMinute: 0.51,
};

/** The engines' pace in the reference call, for neurons: tokens per model request, characters per reply. */
export const ENGINE_PACE = { inputTokens: 1200, outputTokens: 40, replyChars: 80, calleeSpeechShare: 0.45 };

const LLM = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";
const TTS = "@cf/deepgram/aura-1";
const STT = "@cf/deepgram/nova-3";
const TURN = "@cf/pipecat-ai/smart-turn-v2";

/** One measured call, the bench's own observation taken out. */
export function perCall(m: Measured) {
  const n = m.calls;
  const replies = Math.ceil(m.turns_per_call / 2);
  const calleeTurns = Math.floor(m.turns_per_call / 2);
  const latency = m.d1RunRowBytes.latency ?? 0;
  const rowBytes = Object.values(m.d1RunRowBytes).reduce((a, b) => a + b, 0);
  const doRequests = Object.fromEntries(Object.entries(m.durableObjects).map(([k, v]) => [k, v / n]));
  // The bench prepared each session with one RPC of its own.
  doRequests.CALL_SESSION = (doRequests.CALL_SESSION ?? 0) - m.benchSessionRpcs / n;
  const audioSeconds = (m.carrierFramesIn * 0.02) / n;
  return {
    replies,
    calleeTurns,
    audioSeconds,
    workerRequests: m.workerRequests / n,
    d1: {
      statements: (m.d1.statements - m.benchStatements) / n,
      writeStatements: m.d1.writeStatements / n,
      rowsWritten: m.d1.rowsWritten / n,
      rowsRead: (m.d1.rowsRead - m.benchStatements) / n,
      growthBytes: m.d1.bytesAdded / n,
      rowBytes,
      latencyBytesPerReply: replies ? latency / replies : 0,
      rowBytesWithoutLatency: rowBytes - latency,
    },
    r2: {
      classA: m.r2.classA / n,
      classB: m.r2.classB / n,
      detailsBytesPerTurn: m.r2BytesAdded.details / n / m.turns_per_call,
      recordingBytesPerSecond: audioSeconds ? m.r2BytesAdded.recordings / n / audioSeconds : 0,
    },
    queueMessages: m.queueMessages / n,
    doRequests,
    fetches: Object.values(m.fetches).reduce((a, b) => a + b, 0) / n,
    engine: {
      llmPerReply: ((m.engineRequests[LLM] ?? 0) / n - 1) / replies, // one request per call is the analysis
      ttsPerReply: (m.engineRequests[TTS] ?? 0) / n / replies,
      sttPerCalleeTurn: calleeTurns ? (m.engineRequests[STT] ?? 0) / n / calleeTurns : 0,
      turnPerCalleeTurn: calleeTurns ? (m.engineRequests[TURN] ?? 0) / n / calleeTurns : 0,
    },
  };
}

/** The reference call's figures, scaled from one measured call by what grows with replies and seconds. */
export function referenceCall(m: Measured) {
  const p = perCall(m);
  const r = REFERENCE;
  const turns = r.replies + r.calleeTurns;
  const d1RowBytes = p.d1.rowBytesWithoutLatency + REFERENCE_LATENCY_BYTES;
  const recordingBytes = p.r2.recordingBytesPerSecond * r.seconds;
  const detailsBytes = p.r2.detailsBytesPerTurn * turns;
  const sessionRequests = (p.doRequests.CALL_SESSION ?? 0) + r.seconds; // the heartbeat alarm, every second
  const wsMessages = r.seconds * 50; // the carrier's 20 ms media frames
  const doRequests = Object.values(p.doRequests).reduce((a, b) => a + b, 0) + r.seconds + wsMessages / PRICES.wsMessagesPerRequest;
  const requests = {
    llmRequests: p.engine.llmPerReply * r.replies + 1,
    ttsRequests: p.engine.ttsPerReply * r.replies,
    sttRequests: p.engine.sttPerCalleeTurn * r.calleeTurns,
    turnRequests: p.engine.turnPerCalleeTurn * r.calleeTurns,
  };
  return { ...p, d1RowBytes, recordingBytes, detailsBytes, sessionRequests, wsMessages, doRequestsBilled: doRequests, requests };
}

const neuronsPerCall = (c: ReturnType<typeof referenceCall>) => {
  const minutes = REFERENCE.seconds / 60;
  const llm = (c.requests.llmRequests * (ENGINE_PACE.inputTokens * PRICES.llmInputNeuronsPerM + ENGINE_PACE.outputTokens * PRICES.llmOutputNeuronsPerM)) / 1e6;
  const tts = ((REFERENCE.replies * ENGINE_PACE.replyChars) / 1000) * PRICES.ttsNeuronsPer1kChars;
  const stt = minutes * ENGINE_PACE.calleeSpeechShare * PRICES.sttNeuronsPerMinute;
  const turn = minutes * PRICES.turnNeuronsPerMinute;
  return { llm, tts, stt, turn, total: llm + tts + stt + turn };
};

/** Dollars for one reference call, per line. */
export function callCost(c: ReturnType<typeof referenceCall>) {
  const neurons = neuronsPerCall(c);
  const lines = {
    "Worker requests": (c.workerRequests * PRICES.workerRequestPerM) / 1e6,
    "Durable Object requests": (c.doRequestsBilled * PRICES.doRequestPerM) / 1e6,
    "Durable Object duration": (REFERENCE.seconds * PRICES.doGb * PRICES.doGbSecondPerM) / 1e6,
    "D1 rows written and read": (c.d1.rowsWritten * PRICES.d1RowWrittenPerM + c.d1.rowsRead * PRICES.d1RowReadPerM) / 1e6,
    "R2 operations": (c.r2.classA * PRICES.r2ClassAPerM + c.r2.classB * PRICES.r2ClassBPerM) / 1e6,
    "R2 storage, 30 days kept": ((c.recordingBytes + c.detailsBytes) / 1e9) * PRICES.r2GbMonth,
    "D1 storage, 30 days kept": (c.d1RowBytes / 1e9) * PRICES.d1GbMonth,
    Queues: (c.queueMessages * 3 * PRICES.queueOpPerM) / 1e6,
    "Workers AI (default models)": (neurons.total / 1000) * PRICES.neuronPerK,
  };
  return { lines, neurons, total: Object.values(lines).reduce((a, b) => a + b, 0) };
}

/** A deployment at `concurrent` calls in conversation (each the reference call) and at `perDay` calls a day. */
export function projections(m: Measured, concurrent = 1000, perDay = 1e6) {
  const c = referenceCall(m);
  const callsPerSecond = concurrent / REFERENCE.seconds;
  const perMinute = (requestsPerCall: number) => (requestsPerCall * concurrent * 60) / REFERENCE.seconds;
  const engineRpm = {
    "text-generation": perMinute(c.requests.llmRequests),
    tts: perMinute(c.requests.ttsRequests),
    asr: perMinute(c.requests.sttRequests),
    turn: perMinute(c.requests.turnRequests),
  };
  const callsWithinEngineLimits = Object.fromEntries(
    Object.entries(engineRpm).map(([task, rpm]) => [task, Math.floor((LIMITS.workersAiRpm[task] / rpm) * concurrent)]),
  );
  const d1BytesPerDay = Math.max(c.d1RowBytes, c.d1.growthBytes) * perDay;
  const cost = callCost(c);
  return {
    reference: c,
    atConcurrent: {
      concurrent,
      callsPerSecond,
      d1QueriesPerSecond: c.d1.statements * callsPerSecond,
      d1WritesPerSecond: c.d1.writeStatements * callsPerSecond,
      d1QueryShare: (c.d1.statements * callsPerSecond) / LIMITS.d1QueriesPerSecond,
      organizationObjectRequestsPerSecond: (c.doRequests.ORGANIZATION ?? 0) * callsPerSecond,
      capacityObjectRequestsPerSecond: (c.doRequests.ENGINE_CAPACITY ?? 0) * callsPerSecond,
      queueMessagesPerSecond: c.queueMessages * callsPerSecond,
      engineRpm,
      callsWithinEngineLimits,
    },
    perDay: {
      calls: perDay,
      d1BytesPerDay,
      daysUntilD1Full: LIMITS.d1DatabaseBytes / d1BytesPerDay,
      d1RetentionDaysThatFit: Math.floor(LIMITS.d1DatabaseBytes / d1BytesPerDay),
      r2BytesPerDay: (c.recordingBytes + c.detailsBytes) * perDay,
      d1RowsWrittenPerDay: c.d1.rowsWritten * perDay,
      neuronsPerDay: cost.neurons.total * perDay,
    },
    cost: { perCall: cost.total, per1000Minutes: (cost.total * 1000) / (REFERENCE.seconds / 60), lines: cost.lines, neurons: cost.neurons },
  };
}
