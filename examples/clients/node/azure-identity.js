// @azure/identity 4: ClientSecretCredential on the sandbox. It needs
// authorityHost (the sandbox URL) and disableInstanceDiscovery: true;
// without the flag it asks login.microsoftonline.com first and fails with
// CredentialUnavailableError.
import { ClientSecretCredential } from "@azure/identity";
import { env, check, pass, call, advanceClock, callsSucceed } from "./sandbox.js";

const credential = (secret) =>
  new ClientSecretCredential(env.tenant, env.clientId, secret, {
    authorityHost: env.url,
    disableInstanceDiscovery: true,
  });

let cred = credential(env.clientSecret);
const first = await cred.getToken(env.scope);
pass("token");
await callsSucceed(first.token, "trials and ping");
const again = await cred.getToken(env.scope);
check(again.token === first.token, "the second getToken fetched a new token");
pass("token cached");

try {
  await credential("wrong-secret").getToken(env.scope);
  check(false, "a wrong secret got a token");
} catch (e) {
  check(e.message.includes("invalid_client") && e.message.includes("AADSTS7000215"), `wrong secret: ${e.name} ${e.message}`);
  pass(`wrong secret: ${e.name} invalid_client AADSTS7000215`);
}

await advanceClock("7200s");
const cached = await cred.getToken(env.scope);
const status = await call(cached.token, "/api/v1/referrals/trials");
check(status === 401, `after the clock advance the cached token got ${status}, want 401`);
pass("401 after clock advance");
// getToken has no "skip the cache" option: a new credential starts with an
// empty cache.
cred = credential(env.clientSecret);
const fresh = await cred.getToken(env.scope);
check(fresh.token !== cached.token, "the new credential returned the old token");
await callsSucceed(fresh.token, "recovered with a new credential");
