#!/usr/bin/env bash
# Install fabricsim's build and test dependencies from Debian 12 packages.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config \
  libsystemc-dev libyaml-cpp-dev libfmt-dev nlohmann-json3-dev libcli11-dev \
  libboost-dev libboost-graph-dev libboost-math-dev libpugixml-dev \
  libgtest-dev libgmock-dev \
  libopenmpi-dev openmpi-bin \
  clang libclang-rt-14-dev libfuzzer-14-dev \
  python3 python3-matplotlib >/dev/null
echo "install-deps: the build and test dependencies are installed (Debian packages)"
