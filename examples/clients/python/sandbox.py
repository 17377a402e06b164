"""What every Python example shares: the sandbox's addresses from the
environment, an API call, moving the sandbox clock (what QA does to expire
tokens) and a check that stops the program with a clear message. Trusting
the sandbox CA needs nothing here: REQUESTS_CA_BUNDLE=ca.pem (requests)."""

import os
import sys

import requests


def _need(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"set {name}")
    return value


URL = _need("SANDBOX_URL")  # https://localhost:8443
TENANT = _need("SANDBOX_TENANT")
CLIENT_ID = _need("SANDBOX_CLIENT_ID")
CLIENT_SECRET = _need("SANDBOX_CLIENT_SECRET")
SCOPE = os.environ.get("SANDBOX_SCOPE", "api://referrals-sandbox/.default")
TOKEN_URL = f"{URL}/{TENANT}/oauth2/v2.0/token"


def call(token, path):
    """GETs path with token and returns the HTTP status."""
    return requests.get(URL + path, headers={"Authorization": f"Bearer {token}"}, timeout=30).status_code


def advance_clock(duration):
    """Moves the sandbox clock so every token it issued expires."""
    resp = requests.post(f"{URL}/__sandbox/clock", json={"advance": duration}, timeout=30)
    check(resp.status_code == 200, f"clock advance answered {resp.status_code}")


def check(cond, message):
    """Stops the program when cond is false."""
    if not cond:
        print(f"FAIL {message}", file=sys.stderr)
        sys.exit(1)


def passed(step):
    """Reports one step done."""
    print(f"PASS {step}", flush=True)


def calls_succeed(token, step):
    """Calls trials and ping with token and checks both answer 200."""
    trials, ping = call(token, "/api/v1/referrals/trials"), call(token, "/health/ping")
    check(trials == 200 and ping == 200, f"{step}: trials {trials}, ping {ping}")
    passed(step)
