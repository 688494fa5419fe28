# shellcheck shell=bash
# Shared by smoke-test and compose-test (sourced after podman.sh, from the repository's root): the shipped image
# built from a host-built binary (BINARY_SOURCE=context, so that the runtime stage is exactly the shipped one) on
# the local debootstrap base of scripts/container/base-image, without a registry.
#   EDGE_GATEWAY_BINARY   an already built `edge-gateway` (release, --static-swift-stdlib, as scripts/build-release
#                         makes it); its *.resources bundles are taken from the same directory. Default: build it.

# Where the Dockerfile's binary-context stage takes the binary from (the one build directory .dockerignore lets
# through).
image_staging=.build-container/dist

# Prints the binary to put in the image: EDGE_GATEWAY_BINARY, or one built now with scripts/build-release.
gateway_binary() {
    local directory
    if [ -n "${EDGE_GATEWAY_BINARY:-}" ]; then
        echo "$EDGE_GATEWAY_BINARY"
    else
        echo "building the release binary on the host" >&2
        directory="$(nice scripts/build-release)" || return 1
        echo "$directory/edge-gateway"
    fi
}

# Stages BINARY and its resource bundles, stripped as the Dockerfile's build stage strips them (so that the image
# size is the shipped one), and prints their size in bytes.
stage_gateway_binary() {
    local binary="$1"
    [ -x "$binary" ] || {
        echo "no executable binary at $binary" >&2
        return 1
    }
    rm -rf "$image_staging"
    mkdir -p "$image_staging"
    cp "$binary" "$image_staging/"
    find "$(dirname "$binary")" -maxdepth 1 -name '*.resources' -exec cp -R {} "$image_staging/" \;
    strip "$image_staging/edge-gateway"
    du -sb "$image_staging" | cut -f1
}

# Builds IMAGE from the staged binary, buildah's output going to LOG.
build_gateway_image() {
    local image="$1" log="$2"
    scripts/container/base-image
    podman_cmd build --isolation=chroot --pull=never --format docker \
        --build-arg BINARY_SOURCE=context --build-arg PREBUILT_DIR="$image_staging" \
        --tag "$image" . >"$log" 2>&1
}

# Removes IMAGE, unless EDGE_GATEWAY_KEEP_IMAGE=1, and the staged binary.
remove_gateway_image() {
    local image="$1"
    if [ "${EDGE_GATEWAY_KEEP_IMAGE:-0}" != 1 ]; then
        podman_cmd rmi --force "$image" >/dev/null 2>&1 || true
        # The build's intermediate stage images; the private store holds nothing else untagged.
        podman_cmd image prune --force >/dev/null 2>&1 || true
    fi
    rm -rf "$image_staging"
}
