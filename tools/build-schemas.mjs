#!/usr/bin/env node
/**
 * Writes every tool's JSON Schemas, as tools/list lists them, beside the command's bundle
 * (dist/cli/tool-schemas.json), where the server reads them instead of making them from zod on
 * its first tools/list (src/mcp/tools/schemas.ts): made by the built command itself, a stdio
 * server on a new database in a temp folder asked tools/list before the file exists, so the file
 * holds exactly what that code makes. Run by `npm run build`, after the bundle.
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
/** Tools whose schemas the server makes lazily: all of them must be in the file. */
const MUST_LIST = ['getMe', 'exportContacts', 'findContacts', 'getWorkspace', 'previewBulk', 'runBulk'];

rmSync(OUT, { force: true });
const dir = mkdtempSync(join(tmpdir(), 'workspace-mcp-schemas-'));
try {
  const tools = await listTools(join(dir, 'w.db'));
  const names = tools.map((t) => t.name);
  const missing = MUST_LIST.filter((n) => !names.includes(n));
  if (missing.length > 0) throw new Error(`tools/list lacks ${missing.join(', ')}`);
  const out = {};
  for (const t of tools) out[t.name] = { input: t.inputSchema, ...(t.outputSchema ? { output: t.outputSchema } : {}) };
  writeFileSync(OUT, JSON.stringify(out));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** tools/list of the built command's stdio server on a new database at `db` (no key: its default owner). */
function listTools(db) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [join(BUNDLE_DIR, 'main.js'), 'mcp', '--db', db], {
      // Nothing of the caller's WORKSPACE_* settings: the schemas depend on the code alone.
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => finish(new Error('no answer to tools/list within 30 s')), 30_000);
    const finish = (e, tools) => {
      clearTimeout(timer);
      proc.kill();
      if (e) reject(new Error(`build-schemas: ${e.message}${err ? `\n${err}` : ''}`));
      else resolve(tools);
    };
    proc.stderr.on('data', (d) => (err += d));
    proc.once('error', (e) => finish(e));
    proc.once('exit', (code) => finish(new Error(`the server exited (${code}) before answering`)));
    proc.stdout.on('data', (d) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        const msg = JSON.parse(line);
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
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'build-schemas', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  });
}
