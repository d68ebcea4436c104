// Global setup of the integration suite (Node): a second sipp UAS, on 127.0.0.1:5071 with its RTP on 6100, that answers
// with RFC 4733 telephone-event and echoes every RTP packet back (test/integration/uas-dtmf-echo.xml): the far end of the
// ARI keypad test, reached as PJSIP/sipp/sip:…@127.0.0.1:5071. Stopped by its PID. Without sipp, sipp.global.ts
// says so and the test is skipped.
import { spawn, spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

export default function setup() {
  if (spawnSync("sipp", ["-v"], { stdio: "ignore" }).error !== undefined) return;
  const scenario = `${dirname(fileURLToPath(import.meta.url))}/uas-dtmf-echo.xml`;
  const args = ["-sf", scenario, "-p", "5071", "-i", "127.0.0.1", "-mi", "127.0.0.1", "-mp", "6100", "-rtp_echo", "-nostdin"];
  const uas = spawn("sipp", args, { stdio: "ignore", detached: true });
  uas.unref();
  return () => {
    if (uas.pid) process.kill(uas.pid);
  };
}
