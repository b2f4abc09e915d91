-- The load of one benchmark run, for wrk (bench/wrk.ts starts it):
--   wrk -t 1 -c 50 -d 5s -s bench/wrk/load.lua http://127.0.0.1:3000 -- <requests file> <threads> [statuses]
-- The requests file holds one request per line, `path` or `path<TAB>if-none-match`, in the
-- order of the seeded sequence; each thread starts at its own offset and cycles through it.
-- Requests are formatted once, in init(), so that a request costs wrk a table lookup.
-- With `statuses`, each answer's status is counted (wrk then parses headers and buffers the
-- body, which costs it CPU: not for multi-megabyte bodies, whose statuses over 399 wrk counts
-- anyway). done() prints one JSON line that bench/wrk.ts reads.

local threads = {}

function setup (thread)
  thread:set('id', #threads)
  table.insert(threads, thread)
end

function init (args)
  requests = {}
  for line in io.lines(args[1]) do
    local path, etag = line:match('^([^\t]*)\t?(.*)$')
    local headers = {}
    if etag ~= '' then headers['If-None-Match'] = etag end
    requests[#requests + 1] = wrk.format('GET', path, headers)
  end
  count = #requests
  -- Threads start apart in the sequence, so that they do not send the same requests in step.
  index = math.floor(id * count / tonumber(args[2])) % count
  statuses = {}
  if args[3] ~= 'statuses' then response = nil end
end

function request ()
  index = index % count + 1
  return requests[index]
end

function response (status)
  statuses[status] = (statuses[status] or 0) + 1
end

function done (summary, latency)
  local sums = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get('statuses')) do sums[status] = (sums[status] or 0) + n end
  end
  local merged = {}
  for status, n in pairs(sums) do merged[#merged + 1] = string.format('"%d":%d', status, n) end
  local e = summary.errors
  io.write(string.format(
    'WRK-RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"statusErrors":%d,"timeouts":%d,"meanUs":%f,"p50Us":%d,"p99Us":%d,"maxUs":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(99), latency.max, table.concat(merged, ',')))
end
