#!/bin/sh
# `npm test` after the build, in three lanes at once: the whole suite in-process (.mocharc.json)
# except the fault suites; the fault suites (they mostly wait on time-outs, child processes and
# frozen Redis servers, so they cost little CPU); and the HTTP suites again over the loopback
# gRPC hop (npm run test:grpc-hop). The lanes share nothing (each spawns its own Redis and
# systems on free ports). The second and third lanes' output is held and printed after the
# first's, so no two interleave.
faults_log=$(mktemp)
hop_log=$(mktemp)
trap 'rm -f "$faults_log" "$hop_log"' EXIT
mocha --no-config --exit --timeout 30000 'dist/test/faults/**/*.test.js' >"$faults_log" 2>&1 &
faults=$!
npm run test:grpc-hop --silent >"$hop_log" 2>&1 &
hop=$!
mocha --ignore 'dist/test/faults/**'
main=$?
wait "$faults"
faults_status=$?
wait "$hop"
hop_status=$?
echo
echo "=== the fault suites (test/faults) ==="
cat "$faults_log"
echo
echo "=== the same HTTP suites over the gRPC hop (RAILGATE_TEST_TRANSPORT=grpc) ==="
cat "$hop_log"
[ "$main" -eq 0 ] && [ "$faults_status" -eq 0 ] && [ "$hop_status" -eq 0 ]
