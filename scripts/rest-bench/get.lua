-- wrk script: GETs documents get-0 … get-999 at random (scripts/rest-bench/run writes them first).
-- Usage: wrk -t2 -c16 -d30s -s scripts/rest-bench/get.lua http://127.0.0.1:4984/bench
math.randomseed(os.time())

function request()
    return wrk.format("GET", wrk.path .. "/get-" .. math.random(0, 999),
        { ["Authorization"] = os.getenv("REST_BENCH_AUTH") })
end

function done(summary, latency, requests)
    io.write(string.format("p50 %.2f ms, p99 %.2f ms, %d requests, %d errors (status)\n",
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.requests, summary.errors.status))
end
