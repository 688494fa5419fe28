-- wrk script: each request PUTs a new ~1 KB document, so every request is a real insert (no conflicts).
-- Usage: wrk -t2 -c16 -d30s -s scripts/rest-bench/put.lua http://127.0.0.1:4984/bench
local counter = 0
local threads = {}
local body = '{"type":"reading","payload":"' .. string.rep("x", 1000) .. '"}'

function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

function init(args)
    prefix = "put-" .. id .. "-" .. os.time() .. "-"
end

function request()
    counter = counter + 1
    return wrk.format("PUT", wrk.path .. "/" .. prefix .. counter,
        { ["Content-Type"] = "application/json", ["Authorization"] = os.getenv("REST_BENCH_AUTH") }, body)
end

function done(summary, latency, requests)
    io.write(string.format("p50 %.2f ms, p99 %.2f ms, %d requests, %d errors (status)\n",
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.requests, summary.errors.status))
end
