-- POST /oauth2/v2.0/token with the client credentials grant of
-- sandbox-partner, the request every partner integration starts with.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = "grant_type=client_credentials&client_id=sandbox-partner" ..
  "&client_secret=sandbox-partner-secret&scope=api%3A%2F%2Freferrals-sandbox%2F.default"
