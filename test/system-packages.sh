#!/bin/sh
# `npm run test:all` runs this before it builds: the system packages its suites need, named with the
# command that installs what is missing, instead of minutes of failures first. POSIX sh and shell
# built-ins only (it runs before anything else is known to be there). .ci/run installs the same.
#   redis-server  the throwaway Redis of every suite (test/kit/redis-server.ts; redis-cli for
#                 the Redis Cluster suites, in Debian's redis-tools)
#   openssl       the mTLS suites' certificates (test/kit/tls-certs.ts)
#   chromium      the console and /docs suites drive it headless (CHROMIUM_PATH, else /usr/bin/chromium)
#   postgresql    the request-log suites (test/kit/databases.ts): a server at
#                 RAILGATE_TEST_POSTGRES_URL, or on 127.0.0.1:5432 letting user postgres in
#                 without a password, or else initdb and postgres to start a throwaway cluster
#   prometheus    its promtool runs the alert rules' unit tests (deploy/prometheus)
#   ffmpeg        ffmpeg and ffprobe decode every audio format served (test/kit/ffmpeg.ts)
missing=""
need() { missing="$missing $1"; }
have() { command -v "$1" >/dev/null 2>&1; }

have redis-server || need redis-server
have redis-cli || need redis-tools
have openssl || need openssl
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || need chromium
have promtool || need prometheus
{ have ffmpeg && have ffprobe; } || need ffmpeg

postgres_ok=""
if [ -n "${RAILGATE_TEST_POSTGRES_URL:-}" ]; then
  postgres_ok=yes
elif have psql && PGCONNECT_TIMEOUT=3 psql -h 127.0.0.1 -U postgres -d postgres -Atc 'SELECT 1' >/dev/null 2>&1; then
  postgres_ok=yes
else
  for bin in /usr/lib/postgresql/*/bin; do
    if [ -x "$bin/initdb" ] && [ -x "$bin/postgres" ]; then postgres_ok=yes; fi
  done
  if [ -n "$postgres_ok" ] && [ "$(id -u 2>/dev/null)" = "0" ]; then
    # initdb refuses to run as root: the kit runs it as user postgres, which the package creates.
    postgres_user=""
    while IFS=: read -r name _rest; do
      [ "$name" = "postgres" ] && postgres_user=yes
    done </etc/passwd
    if [ -z "$postgres_user" ]; then
      echo "npm run test:all: running as root, initdb needs the user postgres (Debian's postgresql package creates it)" >&2
      postgres_ok=""
    fi
  fi
fi
[ -n "$postgres_ok" ] || need postgresql

if [ -n "$missing" ]; then
  echo "npm run test:all needs system packages that are missing:$missing" >&2
  echo "install them (Debian, Ubuntu) with:" >&2
  echo "  sudo apt-get install -y$missing" >&2
  echo "(.ci/run installs them itself; README \"Two commands\" lists what each is for)" >&2
  exit 1
fi
