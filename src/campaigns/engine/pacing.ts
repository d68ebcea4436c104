// Pacing: calls start no faster than rate_limit per second, i.e. any 1000 ms window holds at most
// `rate` starts. The window is kept in memory and rebuilt from the attempts table when the object wakes.
export const PACE_WINDOW_MS = 1000;

/** How many calls may start at `now`, given earlier start times (ascending). */
export function startBudget(starts: readonly number[], rate: number, now: number): number {
  let inWindow = 0;
  for (let i = starts.length - 1; i >= 0 && starts[i] > now - PACE_WINDOW_MS; i--) inWindow++;
  return Math.max(0, rate - inWindow);
}

/** The earliest time a call may start, given earlier start times (ascending). */
export function nextStartAt(starts: readonly number[], rate: number, now: number): number {
  if (startBudget(starts, rate, now) > 0) return now;
  // The window is full: the next slot opens when its `rate`-th newest start leaves it.
  return starts[starts.length - rate] + PACE_WINDOW_MS;
}

/** Start times kept for pacing: only those inside the last window can matter. */
export class PaceWindow {
  private starts: number[] = [];

  load(starts: number[]): void {
    this.starts = [...starts].sort((a, b) => a - b);
  }

  record(at: number): void {
    this.starts.push(at);
    let drop = 0;
    while (drop < this.starts.length && this.starts[drop] <= at - PACE_WINDOW_MS) drop++;
    if (drop) this.starts.splice(0, drop);
  }

  budget(rate: number, now: number): number {
    return startBudget(this.starts, rate, now);
  }

  nextAt(rate: number, now: number): number {
    return nextStartAt(this.starts, rate, now);
  }
}
