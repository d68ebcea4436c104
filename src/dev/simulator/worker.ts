// The carrier simulator as a Worker (test support and the local demo). Paths start with a carrier name
// (`/twilio/2010-04-01/…`, `/plivo/v1/…`, `/ari/<account>/ari/…`) or `/_sim/…` for the control API;
// point CARRIER_BASE_URLS at `<origin>/<carrier>`. Requests for other hosts pass through untouched (a `.test` name is
// refused rather than looked up: reach.ts), so it can sit in front of a Worker's whole outbound traffic.
import { reach } from "./reach";

export { CarrierSim } from "./sim-object";

type SimEnv = { CARRIER_SIM: DurableObjectNamespace; SIM_HOSTS?: string };

const CARRIERS = new Set(["_sim", "twilio", "plivo", "vobiz", "telnyx", "vonage", "cloudonix", "exotel", "ari"]);

export default {
  async fetch(req: Request, env: SimEnv): Promise<Response> {
    const url = new URL(req.url);
    const hosts = (env.SIM_HOSTS ?? "sim.test,localhost,127.0.0.1").split(",");
    const first = url.pathname.split("/")[1] ?? "";
    if (!hosts.includes(url.hostname) || !CARRIERS.has(first)) return reach(req);
    return env.CARRIER_SIM.get(env.CARRIER_SIM.idFromName("sim")).fetch(req);
  },
};
