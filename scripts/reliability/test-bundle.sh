# shellcheck shell=bash
# Sourced by the long-run scripts of scripts/reliability: builds the test bundle and names it, so that the scripts
# run it directly (SwiftPM would hold the build directory's lock for the whole run, and /usr/bin/time would measure
# SwiftPM, not the tests).
# CONFIGURATION=release builds an optimised bundle. The tests reach internals (@testable), so that build has
# testing enabled, in a scratch path of its own (.build/fuzz-release) that leaves the shipped release build alone;
# the first run builds the whole package there.
configuration="${CONFIGURATION:-debug}"
build_options=(-c "$configuration")
if [ "$configuration" = release ]; then
    build_options+=(-Xswiftc -enable-testing --scratch-path .build/fuzz-release)
fi

# Builds the tests and prints the path of the bundle to run.
test_bundle() {
    swift build --build-tests "${build_options[@]}" >&2
    echo "$(swift build --show-bin-path "${build_options[@]}")/EdgeGatewayPackageTests.xctest"
}
