#!/usr/bin/env bash
# The other model servers of the real-model matrix, from PyPI, into the same cache as
# setup.sh (run that first; these reuse its SmolLM2 GGUF):
#   - llama-cpp-python's OpenAI-compatible server, built from source (llama-cpp-python[server]);
#   - the LiteLLM proxy (litellm[proxy]), put in front of llama-server the way many hosted
#     gateways re-shape chunks.
# Each lives in its own virtualenv under the cache; with the cache in place this takes a second.
#
#   tests/real-model/setup-matrix.sh     # cache: $TANDEM_REAL_MODEL_CACHE or ~/.cache/tandem-real-model
set -euo pipefail
cache="${TANDEM_REAL_MODEL_CACHE:-$HOME/.cache/tandem-real-model}"
llama_cpp_python_version="0.3.36"
litellm_version="1.100.5"

# The same CPU features as setup.sh's llama-server: native builds crashed on these machines.
llama_cpp_python_cmake="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_CURL=OFF"

# A virtualenv in place (its scripts name their interpreter by path, so it cannot be moved);
# `.complete` marks one whose install finished and holds what it was installed from, so a
# changed pin or flag makes it again.
complete() { [ "$(cat "$1/.complete" 2>/dev/null)" = "$2" ]; }
venv() {
  local dir="$1" pin="$2"
  shift 2
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --upgrade pip
  "$dir/bin/python" -m pip install --quiet "$@"
  echo "$pin" >"$dir/.complete"
}

pin="llama-cpp-python[server]==$llama_cpp_python_version $llama_cpp_python_cmake"
if ! complete "$cache/llama-cpp-python" "$pin"; then
  echo "setup: building llama-cpp-python[server]==$llama_cpp_python_version (several minutes)" >&2
  CMAKE_ARGS="$llama_cpp_python_cmake" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    venv "$cache/llama-cpp-python" "$pin" "llama-cpp-python[server]==$llama_cpp_python_version"
fi
pin="litellm[proxy]==$litellm_version"
if ! complete "$cache/litellm" "$pin"; then
  echo "setup: installing litellm[proxy]==$litellm_version" >&2
  venv "$cache/litellm" "$pin" "litellm[proxy]==$litellm_version"
fi
echo "$cache"
