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

ensure_container_tools
