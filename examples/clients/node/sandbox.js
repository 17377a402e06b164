// What every Node example shares: the sandbox's addresses from the
// environment, an API call, moving the sandbox clock (what QA does to expire
// tokens), and a check that stops the program with a clear message.
// Trusting the sandbox CA needs nothing here: NODE_EXTRA_CA_CERTS=ca.pem.

export const env = {
  url: need("SANDBOX_URL"), // https://localhost:8443
  tenant: need("SANDBOX_TENANT"),
  clientId: need("SANDBOX_CLIENT_ID"),
  clientSecret: need("SANDBOX_CLIENT_SECRET"),
  scope: process.env.SANDBOX_SCOPE || "api://referrals-sandbox/.default",
};

function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`set ${name}`);
    process.exit(2);
  }
  return v;
}

// call GETs path with the token and returns the HTTP status.
export async function call(token, path) {
  const resp = await fetch(env.url + path, { headers: { Authorization: `Bearer ${token}` } });
  await resp.arrayBuffer();
  return resp.status;
}

// advanceClock moves the sandbox clock so every token it issued expires.
export async function advanceClock(duration) {
  const resp = await fetch(env.url + "/__sandbox/clock", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ advance: duration }),
  });
  check(resp.status === 200, `clock advance answered ${resp.status}`);
}

// check stops the program when cond is false.
export function check(cond, message) {
  if (!cond) {
    console.error(`FAIL ${message}`);
    process.exit(1);
  }
}

// pass reports one step done.
export function pass(step) {
  console.log(`PASS ${step}`);
}

// callsSucceed calls trials and ping with token and checks both answer 200.
export async function callsSucceed(token, step) {
  const trials = await call(token, "/api/v1/referrals/trials");
  const ping = await call(token, "/health/ping");
  check(trials === 200 && ping === 200, `${step}: trials ${trials}, ping ${ping}`);
  pass(step);
}
