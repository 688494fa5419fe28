-- wrk script: each request POSTs _bulk_docs with 10,000 new ~1 KB documents (generated IDs).
-- Usage: wrk -t1 -c1 -d60s --timeout 120s -s scripts/rest-bench/bulk.lua http://127.0.0.1:4984/bench
local docs = {}
local doc = '{"type":"reading","payload":"' .. string.rep("x", 1000) .. '"}'
for i = 1, 10000 do docs[i] = doc end
local body = '{"docs":[' .. table.concat(docs, ",") .. ']}'

function request()
    return wrk.format("POST", wrk.path .. "/_bulk_docs",
        { ["Content-Type"] = "application/json", ["Authorization"] = os.getenv("REST_BENCH_AUTH") }, body)
end

function done(summary, latency, requests)
    io.write(string.format("%d requests of 10000 docs, mean %.0f ms, max %.0f ms, %d errors (status)\n",
        summary.requests, latency.mean / 1000, latency.max / 1000, summary.errors.status))
end
