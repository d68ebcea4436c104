// Plivo: Basic auth; V3 signatures (HMAC-SHA256 over URL, sorted query and POST params, plus a nonce).
import { basicCredentials, plivoV3Sign, randomNonce } from "../sign";
import { plivoFamily } from "./plivo-family";

export const plivo = plivoFamily({
  name: "plivo",
  accountPrefix: "/v1/Account",
  digitsTo: /^[1-9]\d{6,14}$/,
  authenticate(req, authId, account) {
    const c = basicCredentials(req.headers.get("authorization"));
    return !!c && c.user === authId && c.password === account.credentials.auth_token;
  },
  async sign(account, url, params) {
    const nonce = randomNonce();
    return { "X-Plivo-Signature-V3": await plivoV3Sign(account.credentials.auth_token, url, params, nonce), "X-Plivo-Signature-V3-Nonce": nonce };
  },
});
