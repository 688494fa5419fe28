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
