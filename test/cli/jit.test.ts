/**
 * Once up, every server lowers V8's tier-up budget (src/cli/jit.ts), so that its call paths are
 * optimised within their first hundred calls instead of after thousands (docs/BENCHMARKS.md: a
 * stdio getMe in short blocks cost twice its optimised CPU at the default). The mechanism is
 * checked on V8 itself (its own optimisation status, `--allow-natives-syntax`, in a child
 * process); each way of serving (stdio, `serve`, `mcp --http`) says it set it, once started. Only
 * on Node 20's V8 11, where it was measured; `WORKSPACE_JIT=default` leaves V8 as it is.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { CLI, cliEnv, INITIALIZE, spawnAnnounced, spawnRpc } from '../helpers/cli.js';
import { tempDir } from '../helpers/world.js';

const JIT = join(CLI, '..', 'jit.js');
const SAID = /"interrupt_budget":8192[^\n]*"msg":"serving: V8 optimises call paths sooner"/;

const V8_11 = process.versions.v8.startsWith('11.');

/** Whether a small function called `calls` times is optimised by then, with or without tierUpSooner (and what it answered). */
function optimisedAfter(calls: number, tuned: boolean, env: Record<string, string> = {}): { optimised: boolean; changed: boolean } {
  const script = `
    const { tierUpSooner } = await import(${JSON.stringify(JIT)});
    const changed = ${tuned} ? tierUpSooner() : false;
    function path(o) { let s = 0; for (const k in o) s += String(o[k]).length; return s + (o.a > 1 ? 1 : 0); }
    for (let i = 0; i < ${calls}; i++) path({ a: i, b: 'x', c: [i] });
    // A job queued for the optimising compiler (a background thread) is waited for; V8 takes up
    // a function marked for it at its next call.
    for (let i = 0; i < 200 && %GetOptimizationStatus(path) & (256 | 512 | 1024); i++) {
      path({ a: i, b: 'x', c: [i] });
      await new Promise((r) => setTimeout(r, 5));
    }
    process.stdout.write(JSON.stringify({ optimised: (%GetOptimizationStatus(path) & 16) !== 0, changed }));
  `;
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, WORKSPACE_JIT: '', ...env },
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

test.runIf(V8_11)('after tierUpSooner a call path run 300 times is optimised; at V8 default it is not, even after 800', () => {
  expect(optimisedAfter(300, true)).toEqual({ optimised: true, changed: true });
  expect(optimisedAfter(800, false).optimised).toBe(false);
});

test("WORKSPACE_JIT=default, or a V8 other than Node 20's, leaves V8 as it is", () => {
  const off = optimisedAfter(300, true, { WORKSPACE_JIT: 'default' });
  expect(off.changed).toBe(false);
  // (A later V8's own mid tier optimises it anyway.)
  if (V8_11) expect(off.optimised).toBe(false);
  else expect(optimisedAfter(300, true).changed).toBe(false);
});

/** The first match of `re` in what `stream` says, as soon as it is said. */
function said(stream: NodeJS.ReadableStream, re: RegExp): Promise<string> {
  let text = '';
  return new Promise((resolve, reject) => {
    const check = (d: Buffer) => {
      text += d.toString();
      const m = re.exec(text);
      if (m) {
        stream.off('data', check);
        resolve(m[0]);
      }
    };
    stream.on('data', check);
    stream.once('end', () => reject(new Error(`ended without ${re}: ${text}`)));
  });
}

test.runIf(V8_11)('the stdio server sets it once started (its first answer written), once however many calls come', async () => {
  const rpc = spawnRpc(['mcp', '--db', join(tempDir(), 'w.db')], cliEnv({ WORKSPACE_LOG_LEVEL: 'debug' }));
  try {
    const line = said(rpc.proc.stderr, SAID);
    rpc.send({ ...INITIALIZE, id: 1 });
    const init = await rpc.answer(1);
    expect(init.result.serverInfo.name).toBeTruthy();
    rpc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    rpc.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getMe', arguments: {} } });
    expect((await rpc.answer(2)).result.isError).toBeFalsy();
    await line;
    // Said once, however many calls come.
    expect(rpc.stderr().match(new RegExp(SAID.source, 'g'))).toHaveLength(1);
  } finally {
    rpc.proc.kill();
  }
});

test.runIf(V8_11)('serve and mcp --http (token and key) set it once listening', async () => {
  const env = cliEnv({ WORKSPACE_LOG_LEVEL: 'debug' });
  for (const args of [
    ['serve', '--db', join(tempDir(), 'w.db'), '--port', '0'],
    ['mcp', '--http', '--db', join(tempDir(), 'w.db'), '--port', '0'],
    ['mcp', '--http', '--auth', 'key', '--db', join(tempDir(), 'w.db'), '--port', '0'],
  ]) {
    const started = await spawnAnnounced(args, /(http:\/\/\S+)\n/, env);
    try {
      await started.waitForStderr(SAID);
    } finally {
      started.proc.kill();
    }
  }
});
