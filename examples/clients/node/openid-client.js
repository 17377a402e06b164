// openid-client 6: discovery from {authority}/v2.0 and the client
// credentials grant, with HTTP Basic (client_secret_basic). No setting is
// needed; it does not cache tokens, so a new grant is the refresh.
import * as oidc from "openid-client";
import { env, check, pass, call, advanceClock, callsSucceed } from "./sandbox.js";

const issuer = new URL(`${env.url}/${env.tenant}/v2.0`);
const configure = (secret) => oidc.discovery(issuer, env.clientId, undefined, oidc.ClientSecretBasic(secret));
const grant = (config) => oidc.clientCredentialsGrant(config, { scope: env.scope });

const config = await configure(env.clientSecret);
const first = await grant(config);
pass("token");
await callsSucceed(first.access_token, "trials and ping");

try {
  await grant(await configure("wrong-secret"));
  check(false, "a wrong secret got a token");
} catch (e) {
  check(e.error === "invalid_client" && e.error_description.includes("AADSTS7000215"), `wrong secret: ${e.name} ${e.error} ${e.message}`);
  pass(`wrong secret: ${e.name} ${e.error} AADSTS7000215`);
}

await advanceClock("7200s");
const status = await call(first.access_token, "/api/v1/referrals/trials");
check(status === 401, `after the clock advance the token got ${status}, want 401`);
pass("401 after clock advance");
const fresh = await grant(config);
await callsSucceed(fresh.access_token, "recovered with a new grant");
