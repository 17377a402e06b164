"""MSAL for Python (Debian python3-msal 1.21): a confidential client on the
sandbox. The one setting it needs is validate_authority=False (or
instance_discovery=False): with validation on it asks
login.microsoftonline.com for instance discovery first."""

import msal

from sandbox import CLIENT_ID, CLIENT_SECRET, SCOPE, TENANT, URL, advance_clock, call, calls_succeed, check, passed


def app(secret):
    return msal.ConfidentialClientApplication(
        CLIENT_ID, client_credential=secret, authority=f"{URL}/{TENANT}", validate_authority=False)


def token(client):
    """The cached token if there is one, else a new one: MSAL 1.21's
    acquire_token_for_client always asks the token endpoint."""
    result = client.acquire_token_silent([SCOPE], account=None) or client.acquire_token_for_client([SCOPE])
    check("access_token" in result, f"token: {result.get('error')} {result.get('error_description')}")
    return result["access_token"]


client = app(CLIENT_SECRET)
first = token(client)
passed("token")
calls_succeed(first, "trials and ping")
check(token(client) == first, "the second acquire fetched a new token")
passed("token cached")

wrong = app("wrong-secret").acquire_token_for_client([SCOPE])
check(wrong.get("error") == "invalid_client" and "AADSTS7000215" in wrong.get("error_description", ""), f"wrong secret: {wrong}")
passed("wrong secret: invalid_client AADSTS7000215")

advance_clock("7200s")
cached = token(client)
status = call(cached, "/api/v1/referrals/trials")
check(status == 401, f"after the clock advance the cached token got {status}, want 401")
passed("401 after clock advance")
fresh = client.acquire_token_for_client([SCOPE])  # skips the cache
check(fresh.get("access_token") not in (None, cached), "acquire_token_for_client returned the old token")
calls_succeed(fresh["access_token"], "recovered with acquire_token_for_client")
