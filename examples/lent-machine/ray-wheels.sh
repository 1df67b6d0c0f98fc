#!/usr/bin/env bash
# usage: bash examples/lent-machine/ray-wheels.sh [PYTHON_VERSION]   (default 3.12, the lent machines')
# Fills .ray with Ray for a lent GPU machine (no network, Python 3.12, x86-64), cut to what
# `python -m bench --ray local` uses: a one-node cluster started by the driver, tasks with a
# runtime_env (py_modules), no dashboard. A call carries the tracked tree (30 MiB) and its
# carried folders in 64 MiB, and Ray's wheel alone is 76 MiB, so the cut leaves out what such a
# run never imports: the Java jars, the dashboard's web client, the libraries built on Ray
# (data, train, tune, serve, rllib, llm, air), and the symbols of its binaries that nothing
# links against. Two xz archives come out, unpacked by examples/lent-machine/ray-check.sh:
#   ray-VERSION-cpXY.tar.xz   Ray, and those of its dependencies the lent image lacks or whose
#                             version Ray's generated code and messages depend on (protobuf,
#                             msgpack, jsonschema and what jsonschema needs)
#   ray-common-cpXY.tar.xz    the rest of its dependencies, which the lent image has (KINDS.md's
#                             list): used only where the machine's Python cannot import them
# Sizes reached (2026-12, Ray 2.60.0, cp312, in MiB): 79 downloaded; Ray and the dependencies
# that travel with it 200 installed, 99 cut (gcs_server, raylet and _raylet.so stripped:
# 114 -> 80; after xz the strip still saves about 13%, raylet 6.4 -> 5.6); the archives 16.7
# and 1.5, so .ray carries 18.2.
# Files brought back by ray-check.sh go in .ray/check/, which this script leaves alone.
# A version other than 3.12 (such as 3.11, this project's developer Python) builds the same
# cut for that Python, to try it here: `bash examples/lent-machine/ray-check.sh` runs it on
# the CPU where there is no GPU. Each build replaces the archives of the last, so that .ray
# holds one Python's cut and stays small enough to carry.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${1:-3.12}
tag=cp${version/./}
ray_version=2.60.0
# Ray's dependencies that the lent image already has; the rest travel with Ray.
common="attrs certifi charset-normalizer click filelock idna packaging pyyaml requests
    typing-extensions urllib3"
platform=(--python-version "$version" --implementation cp --only-binary=:all: --platform manylinux2014_x86_64
    --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m pip download -q "ray==$ray_version" -d "$work/wheels" "${platform[@]}"
mkdir "$work/common-wheels"
for name in $common; do
    mv "$work"/wheels/"${name//-/_}"-*.whl "$work/common-wheels/"
done
echo "downloaded: $(du -shc --apparent-size "$work"/*wheels/*.whl | tail -1 | cut -f1)"
install() {  # install DIR WHEELS...: unpack wheels as they would be installed for $version
    local target=$1; shift
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$target" "${platform[@]}" "$@"
    rm -rf "$target/bin"  # console scripts, written for this machine's python
}
install "$work/ray" "$work"/wheels/*.whl
install "$work/common" "$work"/common-wheels/*.whl
echo "installed: $(du -sh --apparent-size "$work/ray" | cut -f1)"

cd "$work/ray/ray"
rm -rf jars dashboard/client data train tune serve rllib llm air
# Every ELF file (.so and executables): debug symbols and other symbols nothing links against.
find . -type f -print0 | while IFS= read -r -d '' file; do
    if [ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ]; then
        strip --strip-unneeded "$file"
    fi
done
cd - >/dev/null

mkdir -p .ray && rm -f .ray/ray-*.tar.xz
pack() {  # pack DIR ARCHIVE: one xz archive of DIR's contents
    tar -C "$1" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . | xz -9 -T1 >"$2"
}
pack "$work/ray" ".ray/ray-$ray_version-$tag.tar.xz"
pack "$work/common" ".ray/ray-common-$tag.tar.xz"
echo "cut: $(du -sh --apparent-size "$work/ray" | cut -f1), common: $(du -sh --apparent-size "$work/common" | cut -f1)"
du -sh --apparent-size .ray/*.tar.xz
