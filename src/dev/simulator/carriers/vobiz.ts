// Vobiz: X-Auth-ID / X-Auth-Token headers; V3 and V2 signatures over the query-less URL and a nonce only.
import { randomNonce, vobizSign } from "../sign";
import { plivoFamily } from "./plivo-family";

export const vobiz = plivoFamily({
  name: "vobiz",
  accountPrefix: "/api/v1/Account",
  digitsTo: /^\+?[1-9]\d{6,14}$/, // the docs show a leading + accepted on `to`
  authenticate(req, authId, account) {
    return req.headers.get("x-auth-id") === authId && req.headers.get("x-auth-token") === account.credentials.auth_token && !req.headers.get("authorization");
  },
  async sign(account, url) {
    const nonce = randomNonce();
    const token = account.credentials.auth_token;
    return {
      "X-Vobiz-Signature-V3": await vobizSign("V3", token, url, nonce),
      "X-Vobiz-Signature-V3-Nonce": nonce,
      "X-Vobiz-Signature-V2": await vobizSign("V2", token, url, nonce),
      "X-Vobiz-Signature-V2-Nonce": nonce,
    };
  },
});
