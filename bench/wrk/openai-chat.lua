-- wrk script for the torii benchmark: POSTs one JSON request body (an OpenAI chat request, an Anthropic Messages
-- request for the `messages` scenario or an OpenAI Responses request for `responses`: the URL carries the path) on
-- every request, optionally paced to a fixed aggregate rate, and prints the result as one JSON line for
-- bench/bench-wrk.ts.
--
-- Environment (read by every wrk thread, each of which loads this script into its own Lua state):
--   BENCH_BODY_FILE      path of the JSON request body (required)
--   BENCH_AUTHORIZATION  value of the Authorization header (optional)
--   BENCH_RATE           aggregate requests per second over all threads and connections (optional: no pacing)
--   BENCH_THREADS        the wrk -t value, so each thread paces itself to BENCH_RATE / BENCH_THREADS
--   BENCH_KEYS_FILE      a file of virtual key secrets, one per line (optional): every request then carries one of
--                        them picked at random (uniformly, per request) instead of BENCH_AUTHORIZATION
--   BENCH_SEED           seed of that random choice (optional; give every run its own, or runs repeat one sequence)
--
-- Pacing: wrk has no native rate limit, but it calls delay() after each response and waits that many milliseconds
-- before the connection sends its next request. Each thread hands out send slots spaced exactly 1000 * threads / rate
-- ms apart on a monotonic clock (LuaJIT FFI clock_gettime), and delay() returns the time until the next free slot.
-- Slots are absolute, so wrk's millisecond timer granularity jitters single sends but never drifts the rate. When the
-- server falls behind, missed slots are dropped rather than replayed as a burst. Latency is measured by wrk from the
-- actual send, so keep the rate well below the target's capacity (it is, by design: 2000 rps against ~10k+).

local bodyFile = os.getenv("BENCH_BODY_FILE")
assert(bodyFile, "BENCH_BODY_FILE is not set")
local file = assert(io.open(bodyFile, "rb"))
local body = file:read("*a")
file:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
local authorization = os.getenv("BENCH_AUTHORIZATION")
if authorization and authorization ~= "" then
  wrk.headers["Authorization"] = authorization
end

-- Random keys: the requests (one per key, headers and body included) are formatted once per thread in init(), so
-- request() only picks one; wrk calls request() for every request when the script defines it.
local keysFile = os.getenv("BENCH_KEYS_FILE")
if keysFile and keysFile ~= "" then
  local keyedRequests = {}

  function init(args)
    math.randomseed(tonumber(os.getenv("BENCH_SEED") or "") or os.time())
    for secret in io.lines(keysFile) do
      if secret ~= "" then
        local headers = {}
        for name, value in pairs(wrk.headers) do
          headers[name] = value
        end
        headers["Authorization"] = "Bearer " .. secret
        keyedRequests[#keyedRequests + 1] = wrk.format(nil, nil, headers, nil)
      end
    end
    assert(#keyedRequests > 0, "BENCH_KEYS_FILE holds no keys")
  end

  function request()
    return keyedRequests[math.random(#keyedRequests)]
  end
end

local rate = tonumber(os.getenv("BENCH_RATE") or "")
local threads = tonumber(os.getenv("BENCH_THREADS") or "1")

if rate and rate > 0 then
  local ffi = require("ffi")
  ffi.cdef([[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock_id, bench_timespec *tp);
  ]])
  local monotonicClock = 1
  local timespec = ffi.new("bench_timespec")
  local function nowMilliseconds()
    ffi.C.clock_gettime(monotonicClock, timespec)
    return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
  end

  local intervalMilliseconds = 1000 * threads / rate
  local maximumLagMilliseconds = 20
  local nextSlot = nil

  function delay()
    local now = nowMilliseconds()
    if nextSlot == nil or nextSlot < now - maximumLagMilliseconds then
      nextSlot = now
    end
    local wait = nextSlot - now
    nextSlot = nextSlot + intervalMilliseconds
    if wait <= 0 then
      return 0
    end
    return math.floor(wait + 0.5)
  end
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%.0f,"duration_us":%.0f,"bytes":%.0f,'
      .. '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},'
      .. '"latency_us":{"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    errors.connect, errors.read, errors.write, errors.status, errors.timeout,
    latency.mean, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)
  ))
end
