"""azure.identity (Debian python3-azure, 1.13.0b2): ClientSecretCredential
on the sandbox. It needs authority (the sandbox URL) and
instance_discovery=False (this version silently ignores the later spelling
disable_instance_discovery=True)."""

from azure.core.exceptions import ClientAuthenticationError
from azure.identity import ClientSecretCredential

from sandbox import CLIENT_ID, CLIENT_SECRET, SCOPE, TENANT, URL, advance_clock, call, calls_succeed, check, passed


def credential(secret):
    return ClientSecretCredential(TENANT, CLIENT_ID, secret, authority=URL, instance_discovery=False)


cred = credential(CLIENT_SECRET)
first = cred.get_token(SCOPE).token
passed("token")
calls_succeed(first, "trials and ping")
check(cred.get_token(SCOPE).token == first, "the second get_token fetched a new token")
passed("token cached")

try:
    credential("wrong-secret").get_token(SCOPE)
    check(False, "a wrong secret got a token")
except ClientAuthenticationError as e:
    # This version keeps only the description: "Authentication failed:
    # AADSTS7000215: Invalid client secret provided. ..."; no error code.
    check("AADSTS7000215" in str(e), f"wrong secret: {e}")
    passed(f"wrong secret: {type(e).__name__} AADSTS7000215")

advance_clock("7200s")
cached = cred.get_token(SCOPE).token
status = call(cached, "/api/v1/referrals/trials")
check(status == 401, f"after the clock advance the cached token got {status}, want 401")
passed("401 after clock advance")
# get_token has no "skip the cache" option: a new credential starts empty.
fresh = credential(CLIENT_SECRET).get_token(SCOPE).token
check(fresh != cached, "the new credential returned the old token")
calls_succeed(fresh, "recovered with a new credential")
