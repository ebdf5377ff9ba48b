#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios against the built CLI's Streamable HTTP
# endpoint (the demo database, loopback, no token: the suite sends none), for both protocol
# revisions: 2025-11-25 with conformance 0.1.16 and with the 0.2 line's frozen 2025-11-25
# requirement set, and 2026-07-28 with the 0.2 line. Each run has a baseline of the scenarios
# that do not apply to this server (each with its reason) in this folder; a failure of any
# other scenario, or a baselined one that passes, fails the script. The suite needs Node 22:
# `npx -p node@22` runs it without a system install.
# Usage: npm run build && tools/conformance/run.sh [output folder]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/workspace-mcp-conformance-XXXXXX")"
out="${1:-$work/results}"
mkdir -p "$out"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
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
exit $status
