#!/bin/sh
# `npm test` after the build: the whole suite in-process (.mocharc.json) and, at the same time,
# the HTTP suites again over the loopback gRPC hop (npm run test:grpc-hop). The two runs share
# nothing (each spawns its own Redis and systems on free ports), and both wait on sockets, child
# processes and timers much of the time, so on two cores they overlap well. The gRPC-hop run's
# output is held and printed after the in-process run's, so neither interleaves with the other.
hop_log=$(mktemp)
trap 'rm -f "$hop_log"' EXIT
npm run test:grpc-hop --silent >"$hop_log" 2>&1 &
hop=$!
mocha
main=$?
wait "$hop"
hop_status=$?
echo
echo "=== the same HTTP suites over the gRPC hop (RAILGATE_TEST_TRANSPORT=grpc) ==="
cat "$hop_log"
[ "$main" -eq 0 ] && [ "$hop_status" -eq 0 ]
