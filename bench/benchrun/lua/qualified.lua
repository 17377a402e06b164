-- POST /api/v1/referrals/qualified with a unique externalSourceId on every
-- request: a repeated id would answer 409 and measure the conflict path.
-- The id is "<run prefix>-<thread>-<counter>": the prefix (the script's
-- first argument) differs per round, setup numbers the threads, and each
-- thread counts its own requests, so no two requests share an id.
-- The Authorization header comes from wrk's -H flag (wrk.headers).

local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_no", threads)
end

function init(args)
  prefix = (args[1] or "bench") .. "-" .. tostring(thread_no) .. "-"
  counter = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local body = '{"externalSourceId":"' .. prefix .. counter .. '",' ..
    '"trialId":"TRIAL-CARDIO-001",' ..
    '"patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"},' ..
    '"conditions":[{"code":"I50.9","system":"ICD-10-CM","display":"Heart failure"}]}'
  return wrk.format(nil, nil, nil, body)
end
