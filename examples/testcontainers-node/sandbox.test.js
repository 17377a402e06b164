// Starts the referrals-sandbox image with Testcontainers for Node.js, as a
// team's own test suite would, and calls the API with a client-credentials
// token. REFERRALS_SANDBOX_IMAGE names the image (default: the released
// one). Run: npm ci && npm test
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { GenericContainer, Wait } = require('testcontainers')

const image = process.env.REFERRALS_SANDBOX_IMAGE || 'ghcr.io/referrals-sandbox/referrals-sandbox:latest'
let container
let root

before(async () => {
  container = await new GenericContainer(image)
    .withExposedPorts(8080)
    .withWaitStrategy(Wait.forHttp('/__sandbox/health', 8080).forStatusCode(200))
    .start()
  root = `http://${container.getHost()}:${container.getMappedPort(8080)}`
})

after(async () => {
  if (container) await container.stop()
})

// token asks the sandbox's token endpoint with the default development
// partner's public test credentials.
async function token () {
  const res = await fetch(`${root}/oauth2/v2.0/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: 'sandbox-partner',
      client_secret: 'sandbox-partner-secret',
      scope: 'api://referrals-sandbox/.default'
    })
  })
  assert.equal(res.status, 200)
  return (await res.json()).access_token
}

test('a partner lists the trials with a client-credentials token', async () => {
  const trials = await fetch(`${root}/api/v1/referrals/trials`, { headers: { Authorization: `Bearer ${await token()}` } })
  assert.equal(trials.status, 200)
  const body = await trials.json()
  assert.ok(body.trials.length > 0, 'no trials in the fixtures')
})

test('a forced 503 carries Retry-After', async () => {
  const res = await fetch(`${root}/api/v1/referrals/trials`, {
    headers: { Authorization: `Bearer ${await token()}`, 'X-Sandbox-Force-Status': '503' }
  })
  assert.equal(res.status, 503)
  assert.ok(res.headers.get('retry-after'), 'no Retry-After')
})
