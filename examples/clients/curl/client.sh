#!/usr/bin/env bash
# curl: the client credentials request by hand, form credentials, and the
# CA passed with --cacert. Needs SANDBOX_URL, SANDBOX_TENANT,
# SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET and SSL_CERT_FILE (the sandbox's
# ca.pem, from --tls-dir or GET /__sandbox/ca.pem).
set -euo pipefail
: "${SANDBOX_URL:?}" "${SANDBOX_TENANT:?}" "${SANDBOX_CLIENT_ID:?}" "${SANDBOX_CLIENT_SECRET:?}" "${SSL_CERT_FILE:?}"
scope="${SANDBOX_SCOPE:-api://referrals-sandbox/.default}"
token_url="$SANDBOX_URL/$SANDBOX_TENANT/oauth2/v2.0/token"

fail() { echo "FAIL $*" >&2; exit 1; }

# token SECRET prints the token endpoint's JSON answer and its status.
token() {
  curl -sS --cacert "$SSL_CERT_FILE" -w '\n%{http_code}' "$token_url" \
    -d grant_type=client_credentials --data-urlencode "client_id=$SANDBOX_CLIENT_ID" \
    --data-urlencode "client_secret=$1" --data-urlencode "scope=$scope"
}

# status TOKEN PATH prints the HTTP status of a GET with the token.
status() {
  curl -sS --cacert "$SSL_CERT_FILE" -o /dev/null -w '%{http_code}' "$SANDBOX_URL$2" -H "Authorization: Bearer $1"
}

access_token() { sed -n 1p | sed -E 's/.*"access_token":"([^"]+)".*/\1/'; }

calls_succeed() {
  local trials ping
  trials=$(status "$1" /api/v1/referrals/trials)
  ping=$(status "$1" /health/ping)
  [[ $trials == 200 && $ping == 200 ]] || fail "$2: trials $trials, ping $ping"
  echo "PASS $2"
}

answer=$(token "$SANDBOX_CLIENT_SECRET")
[[ $(tail -n1 <<<"$answer") == 200 ]] || fail "token: $answer"
TOKEN=$(access_token <<<"$answer")
echo "PASS token"
calls_succeed "$TOKEN" "trials and ping"

answer=$(token wrong-secret)
[[ $(tail -n1 <<<"$answer") == 401 && $answer == *'"error":"invalid_client"'* && $answer == *AADSTS7000215* ]] || fail "wrong secret: $answer"
echo "PASS wrong secret: 401 invalid_client AADSTS7000215"

# Sandbox time jumps two hours (what QA does): the token has expired.
curl -fsS --cacert "$SSL_CERT_FILE" -o /dev/null "$SANDBOX_URL/__sandbox/clock" -H 'Content-Type: application/json' -d '{"advance":"7200s"}'
got=$(status "$TOKEN" /api/v1/referrals/trials)
[[ $got == 401 ]] || fail "after the clock advance the token got $got, want 401"
echo "PASS 401 after clock advance"
TOKEN=$(token "$SANDBOX_CLIENT_SECRET" | access_token)
calls_succeed "$TOKEN" "recovered with a new token"
