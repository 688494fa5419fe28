# shellcheck shell=bash
# Shared by the container scripts (sourced, not run): one podman invocation with a private vfs store,
# chroot build isolation and runc, so that nothing depends on the host's container setup, kernel overlay
# support or a registry.
#   EDGE_GATEWAY_PODMAN_ROOT   the private store (default /var/tmp/edge-gateway-podman); keeps the base image
#                              between runs

podman_root="${EDGE_GATEWAY_PODMAN_ROOT:-/var/tmp/edge-gateway-podman}"

# Installs the given Debian packages when they are missing.
ensure_debian_packages() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing Debian packages: ${missing[*]}" >&2
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Also what compose-test starts podman's API service with.
podman_options=(
    --root "$podman_root/storage"
    --runroot "$podman_root/run"
    --storage-driver vfs
    --runtime runc
    --cgroup-manager cgroupfs
    --events-backend file
)

podman_cmd() {
    podman "${podman_options[@]}" "$@"
}

# Some sandboxes and CI runners withhold CAP_SYS_RESOURCE, so runc cannot raise a container's limits above
# its caller's; podman's defaults (over a million open files and processes) then fail with "error setting
# rlimit type 7: operation not permitted". Ask for the caller's own open-file limit and a process limit the
# gateway never approaches: per container (container_limits) or, for containers that compose creates through
# the API service, as the service's default_ulimits.
open_files_limit="$(ulimit -Hn)"
[ "$open_files_limit" = unlimited ] && open_files_limit=1048576
container_ulimits=("nofile=$open_files_limit:$open_files_limit" "nproc=32768:32768")
# shellcheck disable=SC2034 # used by the scripts that source this file
container_limits=(--ulimit "${container_ulimits[0]}" --ulimit "${container_ulimits[1]}")

ensure_debian_packages podman buildah runc debootstrap
