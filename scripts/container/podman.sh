# shellcheck shell=bash
# Shared by the container scripts (sourced, not run): one podman invocation with a private vfs store,
# chroot build isolation and runc, so that nothing depends on the host's container setup, kernel overlay
# support or a registry.
#   EDGE_GATEWAY_PODMAN_ROOT   the private store (default /var/tmp/edge-gateway-podman); keeps the base image
#                              between runs

podman_root="${EDGE_GATEWAY_PODMAN_ROOT:-/var/tmp/edge-gateway-podman}"

# Installs the Debian packages the scripts drive when they are missing.
ensure_container_tools() {
    local missing=() package
    for package in podman buildah runc debootstrap; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing Debian packages: ${missing[*]}" >&2
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

podman_cmd() {
    podman \
        --root "$podman_root/storage" \
        --runroot "$podman_root/run" \
        --storage-driver vfs \
        --runtime runc \
        --cgroup-manager cgroupfs \
        --events-backend file \
        "$@"
}

# Some sandboxes and CI runners withhold CAP_SYS_RESOURCE, so runc cannot raise a container's limits above
# its caller's; podman's defaults (over a million open files and processes) then fail with "error setting
# rlimit type 7: operation not permitted". Ask for the caller's own open-file limit and a process limit the
# gateway never approaches.
open_files_limit="$(ulimit -Hn)"
[ "$open_files_limit" = unlimited ] && open_files_limit=1048576
# shellcheck disable=SC2034 # used by the scripts that source this file
container_limits=(--ulimit "nofile=$open_files_limit:$open_files_limit" --ulimit nproc=32768:32768)

ensure_container_tools
