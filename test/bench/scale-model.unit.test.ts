// bench/scale's arithmetic (bench/scale/model.ts): a measured call scaled to the reference call, and the deployment's
// projections against the documented limits.
import { describe, expect, it } from "vitest";
import { callCost, LIMITS, type Measured, perCall, PRICES, projections, REFERENCE, REFERENCE_LATENCY_BYTES, referenceCall } from "../../bench/scale/model";

// Two calls of 5 turns (3 replies, 2 callee turns), 8 s of audio each; the bench's own 10 statements and 2 RPCs.
const measured: Measured = {
  calls: 2,
  turns_per_call: 5,
  d1: { statements: 110, writeStatements: 18, rowsWritten: 40, rowsRead: 210, bytesAdded: 4096 },
  r2: { classA: 6, classB: 4 },
  queueMessages: 2,
  durableObjects: { ORGANIZATION: 6, CALL_SESSION: 4, ENGINE_CAPACITY: 2 },
  alarms: { CallSession: 2 },
  fetches: { "sim.test": 8 },
  r2BytesAdded: { details: 2000, recordings: 256_000 },
  benchStatements: 10,
  benchSessionRpcs: 2,
  carrierFramesIn: 800,
  workerRequests: 8,
  d1RunRowBytes: { id: 1, status: 9, latency: 300, usage: 90 },
  d1Tables: { workflow_runs: { rows: 2, bytes: 800 } },
  engineRequests: { "@cf/meta/llama-3.3-70b-instruct-fp8-fast": 14, "@cf/deepgram/aura-1": 6, "@cf/deepgram/nova-3": 4, "@cf/pipecat-ai/smart-turn-v2": 4 },
};

describe("bench/scale model", () => {
  it("takes the bench's own statements and RPCs out of a measured call", () => {
    const p = perCall(measured);
    expect(p.d1.statements).toBe(50);
    expect(p.d1.rowsRead).toBe(100);
    expect(p.doRequests).toEqual({ ORGANIZATION: 3, CALL_SESSION: 1, ENGINE_CAPACITY: 1 });
    expect(p.audioSeconds).toBe(8);
    expect(p.r2.recordingBytesPerSecond).toBe(16_000);
    // 7 model requests a call, one of them the analysis: 2 per reply.
    expect(p.engine.llmPerReply).toBe(2);
    expect(p.engine.sttPerCalleeTurn).toBe(1);
  });

  it("scales what grows with replies and seconds to the reference call", () => {
    const c = referenceCall(measured);
    // The row without its latency figures (100 B) plus the bounded latency column of 36 replies (not 100 B a reply).
    expect(REFERENCE_LATENCY_BYTES).toBeGreaterThan(150);
    expect(REFERENCE_LATENCY_BYTES).toBeLessThan(400);
    expect(c.d1RowBytes).toBe(100 + REFERENCE_LATENCY_BYTES);
    expect(c.recordingBytes).toBe(16_000 * REFERENCE.seconds);
    expect(c.detailsBytes).toBe(200 * (REFERENCE.replies + REFERENCE.calleeTurns));
    expect(c.requests.llmRequests).toBe(2 * REFERENCE.replies + 1);
    // Stubs' calls, one heartbeat alarm a second, and 50 media messages a second billed 20 to 1.
    expect(c.doRequestsBilled).toBe(5 + REFERENCE.seconds + (REFERENCE.seconds * 50) / 20);
  });

  it("projects the engine budgets, D1's size and the bill", () => {
    const p = projections(measured, 1000, 1e6);
    const rpm = ((2 * REFERENCE.replies + 1) * 1000 * 60) / REFERENCE.seconds;
    expect(p.atConcurrent.engineRpm["text-generation"]).toBeCloseTo(rpm);
    expect(p.atConcurrent.callsWithinEngineLimits["text-generation"]).toBe(Math.floor((LIMITS.workersAiRpm["text-generation"] / rpm) * 1000));
    // D1 grows by the larger of the row and what the measured call added (2,048 B here).
    expect(p.perDay.daysUntilD1Full).toBeCloseTo(LIMITS.d1DatabaseBytes / (Math.max(100 + REFERENCE_LATENCY_BYTES, 2048) * 1e6));
    const cost = callCost(p.reference);
    expect(cost.lines["Durable Object duration"]).toBeCloseTo((REFERENCE.seconds * PRICES.doGb * PRICES.doGbSecondPerM) / 1e6);
    expect(p.cost.per1000Minutes).toBeCloseTo((cost.total * 1000) / 3);
  });
});
