// Types of bounds.mjs for the TypeScript that imports it (its unit test).
export class BenchStopped extends Error {}

export function consecutiveFailures(limit: number, what: string): { ok(): void; fail(err: unknown): void; readonly inRow: number; readonly total: number };

export function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  timers?: { setTimer?: typeof setTimeout; clearTimer?: typeof clearTimeout },
): Promise<T>;

export type Bench = {
  readonly bound: number;
  readonly current: string;
  phase(label: string): void;
  cleanup(fn: () => unknown): void;
  remainingMs(): number;
  run(main: () => Promise<unknown>): Promise<void>;
  stop(code: number, message: string | null): Promise<void>;
};

export function startBench(
  name: string,
  options: {
    seconds: number;
    exit?: (code: number) => void;
    log?: (line: string) => void;
    setTimer?: typeof setTimeout;
    clearTimer?: typeof clearTimeout;
    killChildren?: () => void;
    cleanupMs?: number;
    now?: () => number;
    outsideGuard?: (name: string, seconds: number) => void;
  },
): Bench;

export function startOutsideGuard(name: string, seconds: number): void;
