#!/usr/bin/env node
/**
 * Writes every tool's JSON Schemas, as tools/list lists them, beside the command's bundle
 * (dist/cli/tool-schemas.json), where the server reads them instead of making them from zod on
 * its first tools/list (src/mcp/tools/schemas.ts): made by the built command itself, a stdio
 * server on a new database in a temp folder asked tools/list before the file exists, so the file
 * holds exactly what that code makes. Beside it, dist/cli/tool-list.json: that tools/list answer
 * whole, to a client without MCP Apps (`model`) and to one with them (`apps`), which a stdio
 * server started with no flag that changes the list gives to a tools/list that comes before its
 * tools are loaded (src/cli/tool-list.ts). Run by `npm run build`, after the bundle.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE_DIR = join(ROOT, 'dist', 'cli');
/** Must match BUILT_SCHEMAS_FILE in src/mcp/tools/schemas.ts. */
const OUT = join(BUNDLE_DIR, 'tool-schemas.json');
/** Must match BUILT_LIST_FILE in src/cli/tool-list.ts. */
const LIST_OUT = join(BUNDLE_DIR, 'tool-list.json');
/** A client that declares MCP Apps (src/mcp/composite/apps-support.ts). */
const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
/** Tools whose schemas the server makes lazily: all of them must be in the file. */
const MUST_LIST = ['getMe', 'exportContacts', 'findContacts', 'getWorkspace', 'previewBulk', 'runBulk'];

rmSync(OUT, { force: true });
rmSync(LIST_OUT, { force: true });
const dir = mkdtempSync(join(tmpdir(), 'workspace-mcp-schemas-'));
try {
  const tools = await listTools(join(dir, 'w.db'), {});
  const apps = await listTools(join(dir, 'w.db'), APPS);
  if (apps.length <= tools.length) throw new Error('build-schemas: a client with MCP Apps is listed no more tools than one without');
  const names = tools.map((t) => t.name);
  const missing = MUST_LIST.filter((n) => !names.includes(n));
  if (missing.length > 0) throw new Error(`build-schemas: tools/list lacks ${missing.join(', ')}`);
  const out = {};
  for (const t of tools) {
    // MCP wants both at `type: object`; the SDK rewrites another output schema for a 2025 client,
    // which this file must not keep for every client.
    for (const [which, schema] of [
      ['input', t.inputSchema],
      ['output', t.outputSchema],
    ])
      if (schema !== undefined && schema?.type !== 'object') throw new Error(`build-schemas: ${t.name}'s ${which} schema is not an object`);
    out[t.name] = { input: t.inputSchema, ...(t.outputSchema ? { output: t.outputSchema } : {}) };
  }
  writeFileSync(OUT, JSON.stringify(out));
  writeFileSync(LIST_OUT, JSON.stringify({ model: tools, apps }));
} finally {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}

/**
 * tools/list of the built command's stdio server on the database at `db` (no key: its default
 * owner), to a 2025-11-25 client of `capabilities`; resolves once the server has exited.
 */
function listTools(db, capabilities) {
  // Nothing of the caller's settings for the server: the schemas depend on the code alone.
  const env = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('WORKSPACE_') && k !== 'DATABASE_URL' && k !== 'NODE_OPTIONS') env[k] = v;
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [join(BUNDLE_DIR, 'main.js'), 'mcp', '--db', db], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let outcome;
    const timer = setTimeout(() => finish(new Error('no answer to tools/list within 30 s')), 30_000);
    /** Keep the first outcome and end the server; settled once it has exited (its files closed). */
    const finish = (e, tools) => {
      clearTimeout(timer);
      outcome ??= { e, tools };
      proc.stdin.end();
      proc.kill();
    };
    proc.stderr.on('data', (d) => (err += d));
    proc.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`build-schemas: ${e.message}`));
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      const { e, tools } = outcome ?? { e: new Error(`the server exited (${code}) before answering`) };
      if (e) reject(new Error(`build-schemas: ${e.message}${err ? `\n${err}` : ''}`));
      else resolve(tools);
    });
    proc.stdout.on('data', (d) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl >= 0 && !outcome; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          return finish(new Error(`not JSON-RPC on stdout: ${line.slice(0, 200)}`));
        }
        if (msg.id !== 2) continue;
        if (msg.error) return finish(new Error(`tools/list: ${JSON.stringify(msg.error)}`));
        return finish(undefined, msg.result.tools);
      }
    });
    const send = (m) => proc.stdin.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'build-schemas', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  });
}
