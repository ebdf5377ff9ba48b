#!/usr/bin/env bash
# The built CLI as MCP Inspector's CLI (v2, a client we did not write) meets it:
#   1. tools/list --strict over stdio (a new database in a temp folder): the Inspector's schema
#      lint must find no error, and no input property without a type (its untyped-schema rule in
#      an inputSchema); the other findings (output schemas' nullable `type: [t, "null"]`) are counted;
#   2. tools/call getMe over stdio, answered without error;
#   3. the OAuth sign-in against `mcp --http --auth oauth` (the demo database, its loopback public
#      URL) with a Client ID Metadata Document (--client-metadata-url), then tools/call getMe with
#      the token it got. The person's part, our consent page with a pasted API key, is played by
#      consent.mjs, which also serves the document on loopback;
#   4. money under --max-amount with a server process per call: a read, then a top-up that moves.
# The Inspector needs Node 22: `npx -p node@22` runs it without a system install, while the server
# runs on this script's Node (better-sqlite3 is built for it).
# Usage: npm run build && tools/inspector/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
INSPECTOR=@modelcontextprotocol/inspector@2.12.0
work="$(mktemp -d "${TMPDIR:-/tmp}/workspace-mcp-inspector-XXXXXX")"
node="$(command -v node)"
cli="$root/dist/cli/main.js"
started=$SECONDS
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# A signal (Ctrl-C, a closed pipe) ends the script through EXIT too, so no server outlives it.
trap 'exit 1' INT TERM HUP PIPE

fail() {
  echo "inspector: FAIL: $*" >&2
  exit 1
}

# The Inspector's CLI, its files in the temp folder (not ~/.mcp-inspector) and its secrets (the
# OAuth tokens) in memory, never in the OS keychain; stdout to $1, stderr to $2.
# Interactive OAuth wants a TTY or MCP_AUTO_OPEN_ENABLED=true, which also has it open the
# authorization URL in a browser: BROWSER=true makes that a no-op (consent.mjs plays the browser).
inspector() {
  local out="$1" err="$2"
  shift 2
  mkdir -p "$work/inspector"
  MCP_STORAGE_DIR="$work/inspector" MCP_CATALOG_PATH="$work/inspector/mcp.json" MCP_CLIENT_CONFIG_PATH="$work/inspector/client.json" \
    MCP_INSPECTOR_OAUTH_STATE_PATH="$work/inspector/oauth.json" MCP_INSPECTOR_SECRET_STORE=memory \
    MCP_AUTO_OPEN_ENABLED=true BROWSER=true NO_COLOR=1 \
    npm_config_loglevel=error npm_config_update_notifier=false \
    timeout 300 npx -y -p node@22 -p "$INSPECTOR" mcp-inspector --cli "$@" > "$out" 2> "$err"
}

# What a run of the Inspector said, for a failure's reason.
said() {
  echo "--- the Inspector's stdout:" >&2
  head -c 3000 "$1" >&2 || true
  echo "--- its stderr:" >&2
  tail -30 "$2" >&2 || true
}

# The stdio server, as the Inspector starts it: the Inspector passes a stdio server only a few
# variables of its own environment, so the data folder goes with -e.
mkdir -p "$work/data"
stdio=(-e "WORKSPACE_DATA_DIR=$work/data" -e "WORKSPACE_LOG_LEVEL=warn" "$node" "$cli" mcp --db "$work/empty.db")

# 1. tools/list --strict.
rc=0
inspector "$work/list.json" "$work/list.err" --format json --method tools/list --strict "${stdio[@]}" || rc=$?
if [ "$rc" != 0 ]; then
  said "$work/list.json" "$work/list.err"
  fail "tools/list --strict over stdio exited $rc (6: a schema finding of error severity)"
fi
summary="$(
  "$node" --input-type=module -e '
    import { readFileSync } from "node:fs";
    const out = JSON.parse(readFileSync(process.argv[1], "utf8"));
    const tools = out.result?.tools ?? [];
    const findings = (out.schemaFindings ?? []).flatMap((t) => t.findings.map((f) => ({ tool: t.toolName, ...f })));
    const untyped = findings.filter((f) => f.severity === "error" || (f.schema === "inputSchema" && f.rule === "untyped-schema"));
    for (const f of untyped) console.error(`  ${f.tool} ${f.schema}.${f.path}: ${f.rule} (${f.severity}): ${f.issue}`);
    const counts = {};
    for (const f of findings) counts[`${f.schema} ${f.rule} ${f.severity}`] = (counts[`${f.schema} ${f.rule} ${f.severity}`] ?? 0) + 1;
    const rest = Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(", ");
    console.log(`${tools.length} tools, ${findings.length} findings${rest ? ` (${rest})` : ""}`);
    process.exit(tools.length > 0 && untyped.length === 0 ? 0 : 1);
  ' "$work/list.json"
)" || fail "tools/list --strict ($summary): an error, an input property without a type, or no tools (above)"
echo "inspector tools/list --strict (stdio): pass, $summary"

# 2. tools/call getMe over stdio.
getme() { # the Inspector's JSON answer of tools/call getMe: the owner's name, or nothing
  "$node" --input-type=module -e '
    import { readFileSync } from "node:fs";
    const out = JSON.parse(readFileSync(process.argv[1], "utf8"));
    const r = out.result;
    if (!r || r.isError || typeof r.structuredContent?.data?.id !== "number") process.exit(1);
    console.log(`owner ${r.structuredContent.data.id} (${r.structuredContent.data.name})`);
  ' "$1"
}
if ! inspector "$work/call.json" "$work/call.err" --format json --method tools/call --tool-name getMe "${stdio[@]}" ||
  ! who="$(getme "$work/call.json")"; then
  said "$work/call.json" "$work/call.err"
  fail "tools/call getMe over stdio did not answer the owner"
fi
echo "inspector tools/call getMe (stdio): pass, $who"

# 3. OAuth with a Client ID Metadata Document against `mcp --http --auth oauth`.
free_port() { "$node" -e 'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'; }
port="$(free_port)"
callback="http://127.0.0.1:$(free_port)/oauth/callback"
base="http://127.0.0.1:$port"
"$node" "$cli" seed "$root/fixtures/demo.json" --db "$work/demo.db" > /dev/null 2>&1 || fail "seeding the demo database failed"
mkdir -p "$work/oauth"
WORKSPACE_LOG_LEVEL=warn WORKSPACE_DATA_DIR="$work/oauth" WORKSPACE_SECRET="$("$node" -e 'console.log(require("node:crypto").randomBytes(32).toString("hex"))')" \
  "$node" "$cli" mcp --http --auth oauth --public-url "$base" --port "$port" --db "$work/demo.db" > "$work/server.out" 2> "$work/server.err" &
pids+=($!)
for _ in $(seq 100); do grep -q '/mcp' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
grep -q '/mcp' "$work/server.out" || {
  cat "$work/server.err" >&2
  fail "mcp --http --auth oauth did not start"
}
# demo-dana-key: the demo's owner 1 (Dana Brook, on the Pro plan) pastes her key on the consent page.
"$node" "$here/consent.mjs" "$callback" "$work/oauth-call.err" demo-dana-key > "$work/consent.out" 2> "$work/consent.err" &
pids+=($!)
for _ in $(seq 100); do grep -q '^http' "$work/consent.out" 2>/dev/null && break; sleep 0.1; done
document="$(grep -m1 '^http' "$work/consent.out")" || fail "consent.mjs did not serve the metadata document"
if ! inspector "$work/oauth-call.json" "$work/oauth-call.err" --format json --server-url "$base/mcp" --transport http \
  --client-metadata-url "$document" --callback-url "$callback" --method tools/call --tool-name getMe ||
  ! who="$(getme "$work/oauth-call.json")"; then
  said "$work/oauth-call.json" "$work/oauth-call.err"
  echo "--- consent.mjs:" >&2
  cat "$work/consent.err" >&2
  fail "the OAuth sign-in with a Client ID Metadata Document, then tools/call getMe, did not answer the owner"
fi
grep -q '^delivered' "$work/consent.out" || fail "the Inspector answered, but not through the consent of consent.mjs"
echo "inspector OAuth (client metadata document) + tools/call getMe (Streamable HTTP): pass, $who"
# 4. Money under a cap, one server process per call (as the Inspector's CLI runs stdio): a read in
#    one process lets the next process move money under --max-amount, and the move is checked
#    live (the account read back); an account no answer showed is refused as account_not_seen.
"$node" "$cli" seed "$root/fixtures/demo.json" --db "$work/money.db" > /dev/null 2>&1 || fail "seeding the money database failed"
money=(-e "WORKSPACE_DATA_DIR=$work/data" -e "WORKSPACE_LOG_LEVEL=warn" "$node" "$cli" mcp --db "$work/money.db" --max-amount 5.00)
answer() { # $1: a tools/call result the Inspector wrote with --output; prints the tool's error code, or "ok <amount>"
  "$node" --input-type=module -e '
    import { readFileSync } from "node:fs";
    const r = JSON.parse(readFileSync(process.argv[1], "utf8"));
    const s = r.structuredContent ?? JSON.parse(r.content?.[0]?.text ?? "{}");
    console.log(r.isError ? String(s.code ?? JSON.stringify(s).slice(0, 200)) : `ok ${s.data?.amount}`);
  ' "$1" 2>/dev/null || echo "no result"
}
# The Inspector exits 5 on a result with isError; --output keeps the result itself.
move() { inspector /dev/null "$work/$1.err" --format json --output "$work/$1.json" --method tools/call --tool-name addFundsToContactAccount \
  --tool-arg account_id=501 --tool-arg amount=100 --tool-arg "description=inspector top-up" "${money[@]}" || true; }
move unseen
[ "$(answer "$work/unseen.json")" = account_not_seen ] || {
  said "$work/unseen.json" "$work/unseen.err"
  fail "a move before any read, under --max-amount, was not refused as account_not_seen (it said: $(answer "$work/unseen.json"))"
}
inspector "$work/read.json" "$work/read.err" --format json --method tools/call --tool-name getContactAccounts \
  --tool-arg contact_id=1001 "${money[@]}" || { said "$work/read.json" "$work/read.err"; fail "getContactAccounts over stdio failed"; }
move moved
moved="$(answer "$work/moved.json")"
[ "$moved" = "ok 2600" ] || {
  said "$work/moved.json" "$work/moved.err"
  fail "after a read in its own process, a 1.00 USD top-up under --max-amount 5.00 answered '$moved', not ok 2600"
}
echo "inspector money under --max-amount, a process per call (stdio): pass, account_not_seen before a read, 25.00 -> 26.00 USD after"
echo "inspector: all passed in $((SECONDS - started)) s"
