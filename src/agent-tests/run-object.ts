// A test run's own Durable Object (one per run): it carries the run's calls, so the run goes on when the client that
// asked for it goes away. The POST stores the run's job here and returns; the job runs in the object's alarm, which
// may last minutes where a request may be cut off with its client. An object restarted in the middle of a run (its
// calls' sockets are gone with it) ends the run `error`, saying so, rather than leave it `running`.
import { DurableObject } from "cloudflare:workers";
import { log } from "../lib/log";
import { carryRun, endRunInError, type RunJob } from "./suite";

export function testRunStub(env: Pick<Env, "AGENT_TEST_RUN">, testRunId: number): DurableObjectStub<AgentTestRunObject> {
  return env.AGENT_TEST_RUN.get(env.AGENT_TEST_RUN.idFromName(String(testRunId)));
}

export class AgentTestRunObject extends DurableObject<Env> {
  /** Takes the run's job (once) and starts it at once in the alarm. The model's key, if any, is kept only until the run ends. */
  async start(job: RunJob): Promise<void> {
    if (await this.ctx.storage.get("job")) return;
    await this.ctx.storage.put("job", job);
    await this.ctx.storage.setAlarm(Date.now());
  }

  async alarm(): Promise<void> {
    const job = await this.ctx.storage.get<RunJob>("job");
    if (!job) return;
    if (await this.ctx.storage.get("begun")) {
      await endRunInError(this.env, job, "The test run was interrupted (its runner restarted before the calls ended): run it again");
    } else {
      await this.ctx.storage.put("begun", true);
      try {
        await carryRun(this.env, job);
      } catch (err) {
        log("error", "agent_test_run_failed", { test_run_id: job.testRunId, error: String(err) });
        await endRunInError(this.env, job, "The test run failed unexpectedly");
      }
    }
    await this.ctx.storage.deleteAll();
  }
}
