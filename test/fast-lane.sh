#!/bin/sh
# `npm test` after the build: the fast lane (test/lanes.ts) in two mocha processes at once, one
# per core of a small machine. A process per half rather than mocha --parallel: a parallel run
# starts the shared speech and enforcement systems (their eSpeak workers take seconds) once per
# file, a process once per run. The second half's output is held and printed after the first's,
# so the two never interleave; then the failures of each half again, and the slowest files.
# RAILGATE_TEST_LANE is left unset: the embedded store and the in-memory PGlite, nothing else.
times=$(mktemp)
first_log=$(mktemp)
first_rc=$(mktemp)
second_log=$(mktemp)
trap 'rm -f "$times" "$first_log" "$first_rc" "$second_log"' EXIT
unset RAILGATE_TEST_LANE

half() {
  # shellcheck disable=SC2046 # one argument per file: the names hold no spaces
  RAILGATE_TEST_TIMES="$times" mocha --no-config --exit --timeout 30000 \
    --reporter test/kit/file-times-reporter.cjs $(node dist/test/lanes-cli.js files fast "$1") 2>&1
}

half 2/2 >"$second_log" &
second=$!
# Through tee, so it prints as it runs; its status goes by file (a pipeline's status is tee's).
{
  half 1/2
  echo $? >"$first_rc"
} | tee "$first_log"
first=$(cat "$first_rc")
wait "$second"
second_status=$?
echo
echo "=== the fast lane's second half ==="
cat "$second_log"

failures() {
  echo
  echo "=== failures: $1 ==="
  if grep -Eq '^  [0-9]+ failing' "$2"; then
    sed -n '/^  [0-9]* failing/,$p' "$2"
  else
    echo "(no mocha summary: the half stopped early; its last lines)"
    tail -n 40 "$2"
  fi
}
[ "$first" -eq 0 ] || failures "the fast lane's first half" "$first_log"
[ "$second_status" -eq 0 ] || failures "the fast lane's second half" "$second_log"
echo
node dist/test/lanes-cli.js slowest "$times" 10
[ "$first" -eq 0 ] && [ "$second_status" -eq 0 ]
