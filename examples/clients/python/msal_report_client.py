"""MSAL for Python, as the conformance report judges it: `careful` caches
its token, and stops after a 403 (the remedy is a permissions review);
`naive` asks for a token before every call and retries the refused call;
`renewal` calls every 5 seconds for 70 seconds, as a client of the
short-token- persona, whose 6-minute tokens MSAL renews after one.
It needs nothing but the authority URL (and validate_authority=False, so
that MSAL does not ask login.microsoftonline.com first) and the CA in
REQUESTS_CA_BUNDLE. Run as sandbox-readonly, whose writes get 403.
e2e/msal_report_test.go runs both and checks the report's verdicts."""

import sys
import time

import msal
import requests

from sandbox import CLIENT_ID, CLIENT_SECRET, SCOPE, TENANT, URL, check, passed

MODE = sys.argv[1] if len(sys.argv) > 1 else "careful"
RUN = f"python-msal-{MODE}"
REFERRAL = {"trialId": "TRIAL-CARDIO-001",
            "patient": {"firstName": "Ann", "lastName": "Lee", "dateOfBirth": "1980-04-12", "gender": "female"}}


def app():
    return msal.ConfidentialClientApplication(
        CLIENT_ID, client_credential=CLIENT_SECRET, authority=f"{URL}/{TENANT}", validate_authority=False)


cached = app()


def token():
    """careful: the cached token while MSAL deems it fresh; naive: a new
    application, so a new token, for every call."""
    if MODE != "naive":
        result = cached.acquire_token_silent([SCOPE], account=None) or cached.acquire_token_for_client([SCOPE])
    else:
        result = app().acquire_token_for_client([SCOPE])
    check("access_token" in result, f"token: {result.get('error')} {result.get('error_description')}")
    return result["access_token"]


def call(method, path, body=None):
    resp = requests.request(method, URL + path, json=body, timeout=30,
                            headers={"Authorization": "Bearer " + token(), "X-Sandbox-Run": RUN})
    return resp.status_code


if MODE == "renewal":
    for i in range(15):
        if i:
            time.sleep(5)
        status = call("GET", "/api/v1/referrals/trials")
        check(status == 200, f"trials: {status}")
    passed("renewal")
    sys.exit(0)

for _ in range(10):
    status = call("GET", "/api/v1/referrals/trials")
    check(status == 200, f"trials: {status}")
passed("trials")
status = call("POST", "/api/v1/referrals/", REFERRAL)
check(status == 403, f"a write of sandbox-readonly: {status}, want 403")
if MODE == "naive":
    for _ in range(2):
        call("POST", "/api/v1/referrals/", REFERRAL)
passed("403")
