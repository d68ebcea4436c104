// The README's tour as a test reads it: the shell blocks between `<!-- tour:start -->` and `<!-- tour:end -->`, run in
// one bash session in order, each `# → text` line an expectation that the block's output holds `text` on a line.
import { spawn } from "node:child_process";

/** The tour's shell blocks, each with the output lines it shows. */
export type TourBlock = { script: string; expected: string[] };
export type TourResult = { block: number; output: string; missing: string[]; stderr: string };

export function tourBlocks(readme: string): TourBlock[] {
  const start = readme.indexOf("<!-- tour:start -->");
  const end = readme.indexOf("<!-- tour:end -->");
  if (start < 0 || end < start) throw new Error("the README has no tour markers");
  const blocks: TourBlock[] = [];
  for (const m of readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)) {
    const script = m[1];
    const expected = script
      .split("\n")
      .filter((l) => l.startsWith("# → "))
      .map((l) => l.slice(4).trim());
    blocks.push({ script, expected });
  }
  return blocks;
}

/** Output lines a block showed but did not print. */
export function missingLines(output: string, expected: string[]): string[] {
  const lines = output.split("\n").map((l) => l.trim());
  return expected.filter((e) => !lines.includes(e));
}

/** Runs the blocks in one bash (variables carry over), in `cwd`, each within `timeoutMs`; returns each block's output. */
export async function runTour(
  blocks: TourBlock[],
  { cwd, timeoutMs = 120_000, env = process.env }: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<TourResult[]> {
  const bash = spawn("bash", ["--noprofile", "--norc"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  bash.stdout.on("data", (d: Buffer) => (out += d));
  bash.stderr.on("data", (d: Buffer) => (err += d));
  const results: TourResult[] = [];
  try {
    for (const [i, b] of blocks.entries()) {
      const marker = `__tour_block_${i}_done__`;
      const from = out.length;
      bash.stdin.write(`${b.script}\necho ${marker} $?\n`);
      const started = Date.now();
      while (!out.includes(marker, from)) {
        if (Date.now() - started > timeoutMs) throw new Error(`block ${i + 1} did not finish within ${timeoutMs / 1000} s; stderr: ${err.slice(-500)}`);
        if (bash.exitCode !== null) throw new Error(`bash exited during block ${i + 1}; stderr: ${err.slice(-500)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const output = out.slice(from, out.indexOf(marker, from));
      results.push({ block: i + 1, output, missing: missingLines(output, b.expected), stderr: err });
    }
  } finally {
    bash.stdin.end();
    bash.kill();
  }
  return results;
}
