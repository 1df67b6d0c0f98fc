#!/usr/bin/env bash
# usage: bash examples/lent-machine/wheels.sh
# Fills .whl with what a lent GPU machine (Python 3.12, torch, no network) needs for the real
# models: timm, and transformers with what it imports. A call carries the tree and .whl in
# 64 MiB, so what building a model never imports is left out (the hub's download client,
# pydantic, the CLI's rendering, and tokenizers: the models are built from configs), and
# numpy's own tests are cut from its wheel. The versions are those the committed GPU records
# were measured with, so that new records stay comparable to them.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .whl && mkdir .whl
python3 -m pip download -q --no-deps timm==1.0.29 -d .whl
python3 -m pip download -q transformers==5.17.0 -d .whl --python-version 3.12 --only-binary=:all: \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64
(cd .whl && rm -f hf_xet-* pydantic-* pydantic_core-* pygments-* rich-* markdown_it_py-* mdurl-* \
    annotated_types-* typing_inspection-* tokenizers-*)
python3 - .whl/numpy-*.whl <<'PY'
import os, sys, zipfile
wheel = sys.argv[1]
with zipfile.ZipFile(wheel) as old, zipfile.ZipFile(wheel + ".cut", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as new:
    for item in old.infolist():
        if "/tests/" not in item.filename:
            new.writestr(item, old.read(item.filename))
os.replace(wheel + ".cut", wheel)
PY
# Installed for the lent machine's Python 3.12 and packed with xz: half the wheels' size
rm -rf .whl/site && python3 -m pip install -q --no-index --no-deps --no-compile --ignore-requires-python \
    --target .whl/site --python-version 3.12 --only-binary=:all: --platform manylinux2014_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 .whl/*.whl
tar cJf .whl/site.tar.xz -C .whl/site . && rm -rf .whl/site .whl/*.whl
du -sh --apparent-size .whl
