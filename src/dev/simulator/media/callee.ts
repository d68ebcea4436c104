// The callee's side of each carrier's media stream lives in src/agent-tests/callee.ts (agent tests speak it from the
// Worker, which may not import the simulator); the simulator and the tests use it from here as before.
export * from "../../../agent-tests/callee";
