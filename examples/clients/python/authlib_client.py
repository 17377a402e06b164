"""Authlib (Debian python3-authlib): an OAuth2Session fetching a client
credentials token with HTTP Basic (client_secret_basic, its default). No
setting is needed beyond the token URL and the scope."""

from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session

from sandbox import CLIENT_ID, CLIENT_SECRET, SCOPE, TOKEN_URL, URL, advance_clock, check, passed


def session(secret):
    return OAuth2Session(CLIENT_ID, secret, scope=SCOPE, token_endpoint=TOKEN_URL)


def calls_succeed(s, step):
    """The session sends its own token; both calls must answer 200."""
    trials = s.get(URL + "/api/v1/referrals/trials", timeout=30).status_code
    ping = s.get(URL + "/health/ping", timeout=30).status_code
    check(trials == 200 and ping == 200, f"{step}: trials {trials}, ping {ping}")
    passed(step)


s = session(CLIENT_SECRET)
s.fetch_token(grant_type="client_credentials")
passed("token")
calls_succeed(s, "trials and ping")

try:
    session("wrong-secret").fetch_token(grant_type="client_credentials")
    check(False, "a wrong secret got a token")
except OAuthError as e:
    check(e.error == "invalid_client" and "AADSTS7000215" in (e.description or ""), f"wrong secret: {e}")
    passed(f"wrong secret: {type(e).__name__} invalid_client AADSTS7000215")

advance_clock("7200s")
status = s.get(URL + "/api/v1/referrals/trials", timeout=30).status_code
check(status == 401, f"after the clock advance the session's token got {status}, want 401")
passed("401 after clock advance")
s.fetch_token(grant_type="client_credentials")  # the refresh: a new grant
calls_succeed(s, "recovered with a new fetch_token")
