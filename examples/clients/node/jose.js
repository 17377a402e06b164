// jose 6: a plain client credentials request (fetch, form credentials), and
// the token verified as a resource server would: createRemoteJWKSet on the
// discovery document's jwks_uri, with its issuer and the API's audience.
import { createRemoteJWKSet, jwtVerify } from "jose";
import { env, check, pass, call, advanceClock, callsSucceed } from "./sandbox.js";

const discovery = await (await fetch(`${env.url}/${env.tenant}/v2.0/.well-known/openid-configuration`)).json();
const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));

async function fetchToken(secret) {
  const resp = await fetch(discovery.token_endpoint, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: env.clientId, client_secret: secret, scope: env.scope }),
  });
  return { status: resp.status, body: await resp.json() };
}

// An API registered in Entra accepts its App ID URI (the aud of v1.0
// tokens) and its application id (the aud of v2.0 tokens, the sandbox's
// default); docs/identity-provider.md gives the sandbox API's id.
const audience = [env.scope.replace(/\/\.default$/, ""), process.env.SANDBOX_API_APP_ID || "2d9e7739-f309-55e5-8097-ebf5ddb52308"];

const first = await fetchToken(env.clientSecret);
check(first.status === 200, `token: ${first.status} ${JSON.stringify(first.body)}`);
const { payload } = await jwtVerify(first.body.access_token, jwks, {
  issuer: discovery.issuer,
  audience,
});
check((payload.azp ?? payload.appid) === env.clientId, `azp ${payload.azp}, appid ${payload.appid}`);
pass("token verified with the JWKS");
await callsSucceed(first.body.access_token, "trials and ping");

const wrong = await fetchToken("wrong-secret");
check(wrong.status === 401 && wrong.body.error === "invalid_client" && wrong.body.error_codes.includes(7000215), `wrong secret: ${wrong.status} ${JSON.stringify(wrong.body)}`);
pass("wrong secret: invalid_client AADSTS7000215");

await advanceClock("7200s");
const status = await call(first.body.access_token, "/api/v1/referrals/trials");
check(status === 401, `after the clock advance the token got ${status}, want 401`);
pass("401 after clock advance");
const fresh = await fetchToken(env.clientSecret);
check(fresh.status === 200, `new token: ${fresh.status}`);
await callsSucceed(fresh.body.access_token, "recovered with a new token");
