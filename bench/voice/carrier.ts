// bench/voice --e2e's carriers: each carrier's side of its media stream (framing, codec, marks, clears) as the product's
// agent tests and the simulator speak it (src/agent-tests/callee.ts), bundled for the Node client by run.mjs.
export { CALLEE_PROTOCOLS, fromWire, toWire } from "../../src/agent-tests/callee";
