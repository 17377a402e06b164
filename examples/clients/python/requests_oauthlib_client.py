"""requests-oauthlib (Debian python3-requests-oauthlib): BackendApplicationClient
with OAuth2Session. The one setting it needs is scope passed to
fetch_token: without it no scope is sent and the sandbox answers
invalid_request (AADSTS900144), as Entra does."""

from oauthlib.oauth2 import BackendApplicationClient, InvalidClientError
from requests_oauthlib import OAuth2Session

from sandbox import CLIENT_ID, CLIENT_SECRET, SCOPE, TOKEN_URL, URL, advance_clock, check, passed


def fetch(s, secret):
    return s.fetch_token(token_url=TOKEN_URL, client_id=CLIENT_ID, client_secret=secret, scope=[SCOPE])


def calls_succeed(s, step):
    """The session sends its own token; both calls must answer 200."""
    trials = s.get(URL + "/api/v1/referrals/trials", timeout=30).status_code
    ping = s.get(URL + "/health/ping", timeout=30).status_code
    check(trials == 200 and ping == 200, f"{step}: trials {trials}, ping {ping}")
    passed(step)


s = OAuth2Session(client=BackendApplicationClient(client_id=CLIENT_ID))
fetch(s, CLIENT_SECRET)
passed("token")
calls_succeed(s, "trials and ping")

try:
    fetch(OAuth2Session(client=BackendApplicationClient(client_id=CLIENT_ID)), "wrong-secret")
    check(False, "a wrong secret got a token")
except InvalidClientError as e:
    check("AADSTS7000215" in (e.description or ""), f"wrong secret: {e}")
    passed(f"wrong secret: {type(e).__name__} invalid_client AADSTS7000215")

advance_clock("7200s")
status = s.get(URL + "/api/v1/referrals/trials", timeout=30).status_code
check(status == 401, f"after the clock advance the session's token got {status}, want 401")
passed("401 after clock advance")
fetch(s, CLIENT_SECRET)  # the refresh: a new grant
calls_succeed(s, "recovered with a new fetch_token")
