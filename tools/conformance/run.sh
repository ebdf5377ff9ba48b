#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios against the built CLI's Streamable HTTP
# endpoint (the demo database, loopback, no token: the suite sends none), for both protocol
# revisions: 2025-11-25 with conformance 0.1.16 and with the 0.2 line's frozen 2025-11-25
# requirement set, and 2026-07-28 with the 0.2 line. Each run has a baseline of the scenarios
# that do not apply to this server (each with its reason) in this folder; a failure of any
# other scenario, or a baselined one that passes, fails the script. The suite needs Node 22:
# `npx -p node@22` runs it without a system install.
# Then the suite's `authorization` scenarios against the authorization server of `--auth oauth`
# (metadata; the code grant with PKCE, iss, Cache-Control: no-store, token endpoint auth none):
# sign-in.mjs registers the suite's client, fills our consent form (a seeded API key) where the
# suite asks for a browser, and holds the results to baseline-authorization.yml.
# Usage: npm run build && tools/conformance/run.sh [output folder]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/workspace-mcp-conformance-XXXXXX")"
out="${1:-$work/results}"
mkdir -p "$out"
server=""
oauth=""
suite_pid=""
cleanup() {
  for p in $server $oauth $suite_pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# A signal (Ctrl-C, a closed pipe) ends the script through EXIT too, so the server never outlives it.
trap 'exit 1' INT TERM HUP PIPE

node "$root/dist/cli/main.js" seed "$root/fixtures/demo.json" --db "$work/demo.db" > /dev/null 2>&1
WORKSPACE_LOG_LEVEL=warn WORKSPACE_DATA_DIR="$work" node "$root/dist/cli/main.js" mcp --db "$work/demo.db" --http --port 0 \
  > "$work/url" 2> "$work/server.log" &
server=$!
for _ in $(seq 100); do grep -q '/mcp' "$work/url" 2>/dev/null && break; sleep 0.1; done
url="$(grep -o 'http://[^ ]*/mcp' "$work/url" | head -1)"
[ -n "$url" ] || { echo "conformance: the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
# The suite names the host "localhost", as a client on this machine would.
url="${url/127.0.0.1/localhost}"

suite() { # version, name, baseline, then the suite's own arguments
  local version="$1" name="$2" file="$3" baseline="$here/$3"
  shift 3
  if npx -y -p node@22 -p "@modelcontextprotocol/conformance@$version" -c "conformance server --url $url -o $out/$name --expected-failures $baseline $*" > "$out/$name.txt" 2>&1; then
    echo "conformance $name: pass, $(grep -cE '^  - ' "$baseline") entries not applicable ($file); the suite's count: $(grep -E '^Total' "$out/$name.txt" | tail -1 | sed 's/^Total: //')"
  else
    echo "conformance $name: FAIL (see below)"
    tail -40 "$out/$name.txt"
    status=1
  fi
}

status=0
suite 0.1.16 "0.1.16-2025-11-25" baseline-0.1.16.yml
suite 0.2.0-alpha.12 "0.2-2025-11-25" baseline-0.2-2025-11-25.yml --requirements 2025-11-25
suite 0.2.0-alpha.12 "0.2-2026-07-28" baseline-0.2-2026-07-28.yml --requirements 2026-07-28

# The authorization server: the same database, its own data folder (its grants), a secret to seal
# keys with, and a public URL naming a port chosen now; the suite's callback on another.
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port="$(free_port)"
callback="$(free_port)"
issuer="http://127.0.0.1:$port"
mkdir -p "$work/oauth"
# The seeded database's own secret (beside it) opens its values and seals the signed-in keys.
WORKSPACE_LOG_LEVEL=warn WORKSPACE_DATA_DIR="$work/oauth" WORKSPACE_SECRET="$(cat "$work/demo.db.secret")" \
  node "$root/dist/cli/main.js" mcp --db "$work/demo.db" --http --auth oauth --public-url "$issuer" --port "$port" \
  > "$work/oauth.url" 2> "$work/oauth.log" &
oauth=$!
for _ in $(seq 100); do grep -q '/mcp' "$work/oauth.url" 2>/dev/null && break; sleep 0.1; done
grep -q '/mcp' "$work/oauth.url" || { echo "conformance: the OAuth server did not start" >&2; cat "$work/oauth.log" >&2; exit 1; }
client="$(node "$here/sign-in.mjs" register "$issuer" "$callback")"
npx -y -p node@22 -p "@modelcontextprotocol/conformance@0.2.0-alpha.12" -c "conformance authorization --url $issuer \
  --client-id $client --resource $issuer/mcp --port $callback -o $out/authorization" > "$out/authorization.txt" 2>&1 &
suite_pid=$!
# demo-dana-key: the demo database's first owner (fixtures/demo.json).
node "$here/sign-in.mjs" consent "$out/authorization.txt" demo-dana-key || true
wait "$suite_pid" || true
if verdict="$(node "$here/sign-in.mjs" verdict "$out/authorization" "$here/baseline-authorization.yml" 2>&1)"; then
  echo "conformance authorization: pass, $(grep -cE '^  - ' "$here/baseline-authorization.yml" || true) entries not applicable (baseline-authorization.yml); ${verdict##*$'\n'}"
else
  echo "conformance authorization: FAIL (see below)"
  echo "$verdict"
  tail -40 "$out/authorization.txt"
  status=1
fi
exit $status
