// @azure/msal-node 7: a confidential client on the sandbox. The one setting
// it needs is knownAuthorities (the sandbox's host:port): without it,
// msal-node asks login.microsoftonline.com for instance discovery first.
import { ConfidentialClientApplication } from "@azure/msal-node";
import { env, check, pass, call, advanceClock, callsSucceed } from "./sandbox.js";

const app = (secret) =>
  new ConfidentialClientApplication({
    auth: {
      clientId: env.clientId,
      clientSecret: secret,
      authority: `${env.url}/${env.tenant}`,
      knownAuthorities: [new URL(env.url).host],
    },
  });

const cca = app(env.clientSecret);
const request = { scopes: [env.scope] };
const first = await cca.acquireTokenByClientCredential(request);
pass("token");
await callsSucceed(first.accessToken, "trials and ping");
const again = await cca.acquireTokenByClientCredential(request);
check(again.fromCache && again.accessToken === first.accessToken, "the second acquire did not come from the cache");
pass("token cached");

try {
  await app("wrong-secret").acquireTokenByClientCredential(request);
  check(false, "a wrong secret got a token");
} catch (e) {
  check(e.errorCode === "invalid_client" && e.errorMessage.includes("AADSTS7000215"), `wrong secret: ${e.errorCode} ${e.errorMessage}`);
  // msal-node sends client-request-id as a query parameter; the body's
  // correlation id must be that same id.
  check(e.errorMessage.includes(`Correlation ID: ${e.correlationId}`), `correlation id ${e.correlationId} not in ${e.errorMessage}`);
  pass(`wrong secret: ${e.errorCode} AADSTS7000215`);
}

// Sandbox time jumps two hours: msal-node's cache, on the process clock,
// still holds the token, and the API refuses it.
await advanceClock("7200s");
const cached = await cca.acquireTokenByClientCredential(request);
const status = await call(cached.accessToken, "/api/v1/referrals/trials");
check(status === 401, `after the clock advance the cached token got ${status}, want 401`);
pass("401 after clock advance");
const fresh = await cca.acquireTokenByClientCredential({ ...request, skipCache: true });
check(!fresh.fromCache, "skipCache returned the cached token");
await callsSucceed(fresh.accessToken, "recovered with skipCache");
