# Helpers shared by the scripts that run a gateway process against client processes (scripts/perf/*,
# scripts/reliability/load). Source it; it defines functions only.

# Prints COUNT distinct free TCP ports on 127.0.0.1, one a line; all are held until all are known, so that no two
# are the same.
free_ports() {
    python3 - "$1" <<'PYTHON'
import socket, sys
held = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in held:
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
PYTHON
}

# Writes COUNT documents of about 1 KB, as JSON Lines for `edge-gateway db import`, to standard output.
documents_jsonl() {
    python3 - "$1" <<'PYTHON'
import json, sys
padding = "x" * 960
for index in range(int(sys.argv[1])):
    print(json.dumps({"_id": "doc-%05d" % index, "n": index, "type": "reading", "padding": padding}))
PYTHON
}

# Waits until the gateway answers /health/ready on OPS_PORT; fails with the end of LOG if process PID has exited
# or the gateway is not ready after TRIES half-seconds.
wait_until_ready() {
    local ops_port="$1" pid="$2" log="$3" tries="${4:-600}"
    for _ in $(seq "$tries"); do
        # Bounded: a gateway that accepts the connection and never answers must not stall the caller for ever.
        curl -fs --max-time 5 "http://127.0.0.1:$ops_port/health/ready" >/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || { tail -20 "$log" >&2; return 1; }
        sleep 0.5
    done
    echo "the gateway did not come up" >&2
    tail -20 "$log" >&2
    return 1
}

# User plus system CPU time of process PID so far, in milliseconds (`utime` and `stime` of /proc/PID/stat).
cpu_milliseconds() {
    local ticks
    ticks="$(getconf CLK_TCK)"
    # The fields after the parenthesised command name; utime and stime are the 12th and 13th of them.
    sed 's/.*) //' "/proc/$1/stat" | awk -v ticks="$ticks" '{print int(($12 + $13) * 1000 / ticks)}'
}

# The peak resident set of process PID so far (VmHWM), in KiB.
peak_resident_kib() {
    awk '/^VmHWM:/ {print $2}' "/proc/$1/status"
}

# Prints the directory of the release binaries to run: BIN_DIR when set (another build's binaries, to compare two
# builds), otherwise the release build of PRODUCTS... made here.
release_binaries() {
    if [ -n "${BIN_DIR:-}" ]; then
        echo "$BIN_DIR"
        return
    fi
    for product in "$@"; do
        swift build -c release --product "$product" >&2
    done
    swift build -c release --show-bin-path
}

# Starts the gateway BINARY on CONFIG under valgrind's callgrind with counting off, its profiles going to
# DIR/callgrind.out*, and sets callgrind_pid once OPS_PORT answers. It is started again if it does not become
# ready within 120 probes (a minute while it refuses connections, up to ten once it accepts them and does not
# answer): once (2026-11-29, in CI's run of bb260b2) the gateway under valgrind stopped for good before its first
# answer, a NIO thread parked inside the Swift runtime's metadata cache (swift_getTupleTypeMetadata) with the
# process using no CPU, and the run hung on its readiness probe.
start_under_callgrind() {
    local binary="$1" config="$2" ops_port="$3" dir="$4"
    for _ in 1 2 3; do
        valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dir/callgrind.out" \
            "$binary" "$config" >"$dir/gateway.log" 2>&1 &
        callgrind_pid=$!
        wait_until_ready "$ops_port" "$callgrind_pid" "$dir/gateway.log" 120 && return 0
        kill -KILL "$callgrind_pid" 2>/dev/null || true
        wait "$callgrind_pid" 2>/dev/null || true
        rm -f "$dir"/callgrind.out*
        echo "the gateway under valgrind did not become ready; starting it again" >&2
    done
    echo "the gateway under valgrind did not become ready in 3 attempts" >&2
    return 1
}

# Dumps what the gateway started by start_under_callgrind in DIR has counted since its last dump, as LABEL, and
# prints the profile's path once callgrind has finished writing it.
dump_callgrind() {
    local label="$1" dir="$2" dump
    callgrind_control --dump="$label" "$callgrind_pid" >/dev/null
    for _ in $(seq 100); do
        dump="$(grep -l "^desc: Trigger: dump $label$" "$dir"/callgrind.out* 2>/dev/null | head -1 || true)"
        [ -n "$dump" ] && grep -q '^totals:' "$dump" && break
        sleep 0.2
    done
    echo "$dump"
}
