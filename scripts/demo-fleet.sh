#!/usr/bin/env bash
# `npm run demo:fleet`: the topology of docs/operations.md on one machine, from Debian packages and
# the built CLI: HAProxy in front of two front APIs, which both call two post APIs, which read
# SQLite (the default) or PostgreSQL through PgBouncer in transaction mode (--postgres).
# Everything it starts runs under a temporary folder and is stopped on Ctrl-C or SIGTERM.
#
#   npm run demo:fleet                       # SQLite: a fresh file with the sample posts
#   npm run demo:fleet -- --postgres         # postgres://postgres@127.0.0.1:5432/test via PgBouncer
#   npm run demo:fleet -- --postgres URL     # another PostgreSQL database (migrated and seeded!)
#   npm run demo:fleet -- --workers 2        # each instance runs 2 processes (WORKERS)
#   DEMO_PORT_BASE=19000 npm run demo:fleet  # ports 19080, 19101… instead of 18080, 18101…
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLI="$ROOT/dist/cli.js"
BASE=${DEMO_PORT_BASE:-18000}
PUBLIC_PORT=$((BASE + 80))   # HAProxy: the service's public address
STATS_PORT=$((BASE + 404))   # HAProxy: statistics page
PGBOUNCER_PORT=$((BASE + 432))
FRONT_PORTS=($((BASE + 101)) $((BASE + 102)))
POSTS_PORTS=($((BASE + 201)) $((BASE + 202)))
STORE=sqlite
POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test
WORKERS=1

while [[ $# -gt 0 ]]; do
  case "$1" in
    --postgres)
      STORE=postgres
      if [[ $# -gt 1 && "$2" == postgres* ]]; then POSTGRES_URL=$2; shift; fi ;;
    --workers) WORKERS=${2:?--workers needs a number or auto}; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo:fleet: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

# Debian installs haproxy and pgbouncer in /usr/sbin, which a user's PATH may lack.
PATH="$PATH:/usr/sbin:/sbin"
fail () { echo "demo:fleet: $*" >&2; exit 1; }
need () { command -v "$1" > /dev/null || fail "$1 is not installed: sudo apt-get install $2"; }
need haproxy haproxy
need curl curl
# On a Node older than the supported lines, every node below runs on a supported one.
bin=$(node "$ROOT/scripts/on-supported-node.js" --bin) || fail "no supported Node.js line to run on"
[ -z "$bin" ] || PATH="$bin:$PATH"
node "$ROOT/scripts/build-if-stale.js" || fail "the build failed: dist/ is not current"
if [[ $STORE == postgres ]]; then
  need pgbouncer pgbouncer
  need psql postgresql-client
fi
for port in $PUBLIC_PORT $STATS_PORT $PGBOUNCER_PORT "${FRONT_PORTS[@]}" "${POSTS_PORTS[@]}"; do
  if (: < "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then fail "port $port is in use (set DEMO_PORT_BASE to another base)"; fi
done

DIR=$(mktemp -d "${TMPDIR:-/tmp}/blog-read-api-fleet.XXXXXX")
mkdir -p "$DIR/logs"
PIDS=()
NAMES=()

# Stops what this script started, each with SIGTERM so that every tier drains as in production
# (the balancer and the fronts are signalled before what they call); SIGKILL for anything left
# after 15 s. A process that already ended has pid 0 here (and `kill 0` would hit the group).
stopping=0
stop_all () {
  [[ $stopping == 1 ]] && return
  stopping=1
  trap '' INT TERM
  echo
  echo "stopping ${#PIDS[@]} processes…"
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do [[ ${PIDS[i]} == 0 ]] || kill -TERM "${PIDS[i]}" 2> /dev/null || true; done
  for _ in $(seq 150); do
    alive=0
    for pid in "${PIDS[@]}"; do [[ $pid != 0 ]] && kill -0 "$pid" 2> /dev/null && alive=1; done
    [[ $alive == 0 ]] && break
    sleep 0.1
  done
  for ((i = 0; i < ${#PIDS[@]}; i++)); do
    if [[ ${PIDS[i]} != 0 ]] && kill -0 "${PIDS[i]}" 2> /dev/null; then echo "  ${NAMES[i]} still running: killed"; kill -KILL "${PIDS[i]}" 2> /dev/null || true; fi
  done
  wait 2> /dev/null || true
  rm -rf "$DIR"
  echo "stopped; $DIR removed"
}
trap stop_all EXIT
trap 'exit 0' INT TERM

# start NAME COMMAND...: runs it in the background, its output in logs/NAME.log.
start () {
  local name=$1
  shift
  "$@" > "$DIR/logs/$name.log" 2>&1 &
  PIDS+=($!)
  NAMES+=("$name")
}

# answers NAME URL: waits until URL gives any HTTP answer (at most 30 s).
answers () {
  for _ in $(seq 300); do
    local i
    for ((i = 0; i < ${#PIDS[@]}; i++)); do
      if [[ ${NAMES[i]} == "$1" ]] && ! kill -0 "${PIDS[i]}" 2> /dev/null; then
        fail "$1 ended at start-up: $(tail -n 3 "$DIR/logs/$1.log")"
      fi
    done
    [[ $(curl -s -o /dev/null -w '%{http_code}' "$2" || true) != 000 ]] && return 0
    sleep 0.1
  done
  fail "$1 does not answer at $2 after 30 s (see $DIR/logs/$1.log)"
}

export WORKERS LOG_LEVEL=info HOST=127.0.0.1

# The store.
if [[ $STORE == sqlite ]]; then
  DATABASE_URL="$DIR/blog.db"
  node "$CLI" migrate --database-url "$DATABASE_URL" > /dev/null
  node "$CLI" seed --database-url "$DATABASE_URL" > /dev/null
  STORE_TEXT="SQLite file $DATABASE_URL (migrated and seeded; both post APIs read it)"
else
  node "$CLI" migrate --database-url "$POSTGRES_URL" > /dev/null
  node "$CLI" seed --database-url "$POSTGRES_URL" > /dev/null
  # PgBouncer in transaction mode, settings as docs/operations.md gives them; `trust`, as the
  # server itself trusts 127.0.0.1 on this machine.
  pg_host=$(node -e 'const u = new URL(process.argv[1]); console.log(u.hostname)' "$POSTGRES_URL")
  pg_port=$(node -e 'const u = new URL(process.argv[1]); console.log(u.port || 5432)' "$POSTGRES_URL")
  pg_db=$(node -e 'const u = new URL(process.argv[1]); console.log(u.pathname.slice(1))' "$POSTGRES_URL")
  pg_user=$(node -e 'const u = new URL(process.argv[1]); console.log(decodeURIComponent(u.username) || "postgres")' "$POSTGRES_URL")
  cat > "$DIR/pgbouncer.ini" <<EOF
[databases]
blog = host=$pg_host port=$pg_port dbname=$pg_db
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGBOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $DIR/userlist.txt
pool_mode = transaction
default_pool_size = 20
max_client_conn = 200
query_wait_timeout = 3
EOF
  echo "\"$pg_user\" \"\"" > "$DIR/userlist.txt"
  # PgBouncer refuses to run as root: then it switches to the postgres user.
  as_user=()
  [[ $(id -u) == 0 ]] && as_user=(-u postgres) && chmod -R a+rX "$DIR"
  start pgbouncer pgbouncer "${as_user[@]}" "$DIR/pgbouncer.ini"
  for _ in $(seq 100); do (: < "/dev/tcp/127.0.0.1/$PGBOUNCER_PORT") 2> /dev/null && break; sleep 0.1; done
  DATABASE_URL="postgres://$pg_user@127.0.0.1:$PGBOUNCER_PORT/blog"
  STORE_TEXT="PostgreSQL ${POSTGRES_URL%%\?*} (migrated and seeded), through PgBouncer at 127.0.0.1:$PGBOUNCER_PORT (transaction mode)"
fi

# The post APIs.
for i in 0 1; do
  start "posts-api-$((i + 1))" env DATABASE_URL="$DATABASE_URL" POSTS_PORT="${POSTS_PORTS[i]}" node "$CLI" posts-api
done
for i in 0 1; do answers "posts-api-$((i + 1))" "http://127.0.0.1:${POSTS_PORTS[i]}/"; done

# HAProxy's health check of the fronts: /readyz where the build has it; otherwise a post that
# does not exist, which answers 404 only when the front can reach a post API (502/503/504 otherwise).
if [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${POSTS_PORTS[0]}/readyz") == 200 ]]; then
  FRONT_CHECK='http-check send meth GET uri /readyz
  http-check expect status 200'
else
  FRONT_CHECK='http-check send meth GET uri /api/blog/health-check-probe
  http-check expect status 404'
fi

# The fronts, each with the list of post APIs: it balances, ejects and retries itself.
API_URL="http://127.0.0.1:${POSTS_PORTS[0]},http://127.0.0.1:${POSTS_PORTS[1]}"

# The balancer. Time-outs in the order docs/operations.md explains: connect 2 s; server 15 s, above
# the front's UPSTREAM_TIMEOUT_MS (10 s) so its precise 504 wins; keep-alive 60 s, under the
# tiers' KEEP_ALIVE_TIMEOUT_MS (72 s); a failed connection or a 503 is retried on another server.
cat > "$DIR/haproxy.cfg" <<EOF
global
  maxconn 4096
defaults
  mode http
  log stdout format raw local0
  option httplog
  timeout connect 2s
  timeout client 30s
  timeout server 15s
  timeout http-request 10s
  timeout http-keep-alive 60s
  timeout queue 5s
  retries 2
  retry-on conn-failure empty-response 503
  option redispatch 1
  default-server inter 1s fall 2 rise 1
frontend public
  bind 127.0.0.1:$PUBLIC_PORT
  default_backend fronts
backend fronts
  balance leastconn
  option httpchk
  $FRONT_CHECK
  server front-1 127.0.0.1:${FRONT_PORTS[0]} check
  server front-2 127.0.0.1:${FRONT_PORTS[1]} check
frontend stats
  bind 127.0.0.1:$STATS_PORT
  stats enable
  stats uri /stats
  stats refresh 2s
EOF
haproxy -c -q -f "$DIR/haproxy.cfg" || fail "HAProxy refused the generated $DIR/haproxy.cfg"
start haproxy haproxy -db -f "$DIR/haproxy.cfg"

for i in 0 1; do
  start "front-$((i + 1))" env API_URL="$API_URL" BLOG_PORT="${FRONT_PORTS[i]}" node "$CLI" front
done
for i in 0 1; do answers "front-$((i + 1))" "http://127.0.0.1:${FRONT_PORTS[i]}/"; done
# Through the whole chain, once HAProxy's first health checks have passed.
for _ in $(seq 100); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PUBLIC_PORT/api/blog/hello-world" || true) == 200 ]] && break
  sleep 0.1
done

pid_of () { for ((i = 0; i < ${#NAMES[@]}; i++)); do [[ ${NAMES[i]} == "$1" ]] && echo "${PIDS[i]}"; done; }
cat <<EOF

Blog Read API fleet, on this machine (WORKERS=$WORKERS per instance):

  clients ─▶ HAProxy http://127.0.0.1:$PUBLIC_PORT ─▶ front-1 :${FRONT_PORTS[0]}, front-2 :${FRONT_PORTS[1]}
             ─▶ (each front: API_URL=$API_URL)
             ─▶ posts-api-1 :${POSTS_PORTS[0]}, posts-api-2 :${POSTS_PORTS[1]} ─▶ store

  store:      $STORE_TEXT
  try:        curl -i http://127.0.0.1:$PUBLIC_PORT/api/blog/hello-world
  balancer:   http://127.0.0.1:$STATS_PORT/stats (servers, health checks, retries)
  logs:       $DIR/logs/ (one JSON line per request per tier; haproxy.log: one per request)
  config:     $DIR/haproxy.cfg$([[ $STORE == postgres ]] && echo ", $DIR/pgbouncer.ini")
  try a loss: kill -TERM $(pid_of posts-api-1)   (posts-api-1 drains and exits; the fronts route around it, see their logs)
  processes:  $(for ((i = 0; i < ${#NAMES[@]}; i++)); do printf '%s=%s ' "${NAMES[i]}" "${PIDS[i]}"; done)

Ctrl-C stops everything it started (each with SIGTERM, so they drain) and removes $DIR.
EOF

# Waits for a signal (the traps stop everything); a process that ends by itself is reported. The
# pause runs in the background: a trapped signal interrupts `wait` at once, not a foreground sleep.
while true; do
  for ((i = 0; i < ${#PIDS[@]}; i++)); do
    if [[ ${PIDS[i]} != 0 ]] && ! kill -0 "${PIDS[i]}" 2> /dev/null; then
      echo "demo:fleet: ${NAMES[i]} (pid ${PIDS[i]}) ended; its log: $DIR/logs/${NAMES[i]}.log" >&2
      PIDS[i]=0
    fi
  done
  sleep 1 &
  wait $!
done
