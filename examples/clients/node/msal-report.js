// msal-node, as the conformance report judges it: `careful` lets MSAL's
// cache serve the token and stops after a 403 (the remedy is a
// permissions review); `naive` skips the cache for every call and retries
// the refused call; `renewal` calls every 5 seconds for 70 seconds, as a
// client of the short-token- persona, whose 6-minute tokens MSAL renews
// after one. It needs the authority URL, knownAuthorities (its
// host:port, so that msal-node does not ask login.microsoftonline.com
// first) and the CA in NODE_EXTRA_CA_CERTS. Run as sandbox-readonly, whose
// writes get 403. e2e/msal_report_test.go runs both and checks the
// report's verdicts.
import { ConfidentialClientApplication } from "@azure/msal-node";
import { env, check, pass } from "./sandbox.js";

const mode = process.argv[2] || "careful";
const run = `node-msal-${mode}`;
const referral = {
  trialId: "TRIAL-CARDIO-001",
  patient: { firstName: "Ann", lastName: "Lee", dateOfBirth: "1980-04-12", gender: "female" },
};

const cca = new ConfidentialClientApplication({
  auth: {
    clientId: env.clientId,
    clientSecret: env.clientSecret,
    authority: `${env.url}/${env.tenant}`,
    knownAuthorities: [new URL(env.url).host],
  },
});

async function token() {
  const result = await cca.acquireTokenByClientCredential({ scopes: [env.scope], skipCache: mode === "naive" });
  return result.accessToken;
}

async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${await token()}`, "X-Sandbox-Run": run };
  if (body) headers["Content-Type"] = "application/json";
  const resp = await fetch(env.url + path, { method, headers, body: body && JSON.stringify(body) });
  await resp.arrayBuffer();
  return resp.status;
}

if (mode === "renewal") {
  for (let i = 0; i < 15; i++) {
    if (i) await new Promise((resolve) => setTimeout(resolve, 5000));
    const status = await call("GET", "/api/v1/referrals/trials");
    check(status === 200, `trials: ${status}`);
  }
  pass("renewal");
  process.exit(0);
}

for (let i = 0; i < 10; i++) {
  const status = await call("GET", "/api/v1/referrals/trials");
  check(status === 200, `trials: ${status}`);
}
pass("trials");
const status = await call("POST", "/api/v1/referrals/", referral);
check(status === 403, `a write of sandbox-readonly: ${status}, want 403`);
if (mode === "naive") {
  for (let i = 0; i < 2; i++) await call("POST", "/api/v1/referrals/", referral);
}
pass("403");
