#!/usr/bin/env node
/**
 * The install routes the README gives, each run as written and spoken to over MCP (the SDK's
 * Client over stdio: initialize, tools/list, getMe):
 *
 *   checkout  `node /abs/path/dist/cli/main.js` (and `… mcp --db FILE`), started from another folder
 *   npm start `npm start` in the checkout (npm's own banner lines on stdout are not JSON-RPC;
 *             the client skips them, a stricter one may not: the README says so)
 *   npm link  `npm link` into a throw-away prefix (nothing global is touched), then
 *             `workspace-mcp` from PATH
 *   tarball   `npm pack` (into a temp folder), then `npm install <tgz>` in an empty folder, then the installed
 *             `node_modules/.bin/workspace-mcp` and `node …/node_modules/workspace-mcp/dist/cli/main.js`,
 *             and `workspace-mcp demo` (the shipped demo fixture), whose printed config must start the server
 *
 * Each route also reads an MCP Apps view (ui://workspace/contacts.html) from the installed files.
 * It also holds the tarball to its contents (dist/ without source maps, the views' HTML, the demo
 * fixture, README, LICENSE, package.json) and the user install to runtime dependencies (no devDependency pulled), and
 * prints the user route's install time and size. A failure names its route, shows the
 * server's stderr, and exits 1. Every temp folder is removed at the end, however it ends.
 *
 *   node tools/check-install.mjs            (after `npm ci`; `npm pack` rebuilds dist/)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { childCpuSeconds, tempDir } from './bench/lib.mjs';
import { loadedFiles } from './bundle.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const WIN = process.platform === 'win32';
/** The most an MCP start-up plus three requests may take; a user install may take minutes. */
const MCP_TIMEOUT_MS = 30_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

const work = tempDir('workspace-mcp-install-');
const home = join(work, 'home');
mkdirSync(home);

function say(msg) {
  process.stderr.write(`[check-install] ${msg}\n`);
}

function fail(msg) {
  process.stderr.write(`[check-install] FAILED: ${msg}\n`);
  process.exit(1);
}

/**
 * The environment a person's shell would give: ours less npm's own `npm_*` variables (set
 * when this runs under `npm run`, they would steer the npm commands below) and less
 * WORKSPACE_*. `node` is first on PATH: the one running this. npm keeps the person's own
 * configuration (HOME), with an empty cache of its own: an install fetches what a first
 * install would.
 */
function shellEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^npm_/i.test(k) && !k.startsWith('WORKSPACE_')) env[k] = v;
  }
  const path = [dirname(process.execPath), env.PATH ?? ''].join(delimiter);
  return { ...env, PATH: path, npm_config_cache: join(work, 'npm-cache'), ...extra };
}

/** A server's environment: HOME and the data folder in the temp folder, so no run touches the real ones. */
function serverEnv(extra = {}) {
  return shellEnv({ HOME: home, USERPROFILE: home, XDG_DATA_HOME: join(home, 'data'), APPDATA: join(home, 'data'), ...extra });
}

/** Run a command to its end; fails loudly with its output when it exits non-zero. */
function run(label, cmd, args, { cwd, env = shellEnv(), timeout = INSTALL_TIMEOUT_MS } = {}) {
  const t0 = performance.now();
  const cpu0 = childCpuSeconds();
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout, shell: WIN, maxBuffer: 64 * 1024 * 1024 });
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = childCpuSeconds();
  const cpuSeconds = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
  if (r.status !== 0) {
    fail(`${label}: \`${cmd} ${args.join(' ')}\` ${r.error ? r.error.message : `exited ${r.status}`}\n${r.stdout}\n${r.stderr}`);
  }
  return { stdout: r.stdout, stderr: r.stderr, seconds, cpuSeconds };
}

/** Start the server as `command args` and talk MCP to it; returns the number of tools. */
async function mcpCheck(label, command, args, { cwd = work, env = serverEnv() } = {}) {
  const transport = new StdioClientTransport({ command, args, cwd, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'check-install', version: '1' });
  let timer;
  let failure;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${MCP_TIMEOUT_MS / 1000} s`)), MCP_TIMEOUT_MS);
  });
  try {
    const n = await Promise.race([
      (async () => {
        await client.connect(transport);
        const info = client.getServerVersion();
        if (info?.name !== 'workspace-mcp') throw new Error(`initialize answered server ${JSON.stringify(info)}`);
        const { tools } = await client.listTools();
        const names = new Set(tools.map((t) => t.name));
        for (const t of ['getMe', 'getContacts', 'addFundsToContactAccount', 'exportContacts']) {
          if (!names.has(t)) throw new Error(`tools/list has no ${t}`);
        }
        const me = await client.callTool({ name: 'getMe', arguments: {} });
        if (me.isError || typeof me.structuredContent?.data?.id !== 'number') throw new Error(`getMe answered ${JSON.stringify(me)}`);
        // The views ship as built HTML beside the code: a route that lost them would serve none.
        const view = await client.readResource({ uri: 'ui://workspace/contacts.html' });
        if (!view.contents[0]?.text?.startsWith('<!doctype html>'))
          throw new Error('the Contacts view (ui://workspace/contacts.html) is not served');
        return tools.length;
      })(),
      timeout,
    ]);
    say(`${label}: initialize, tools/list (${n} tools), getMe and a view answered`);
    return n;
  } catch (e) {
    failure = e;
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
  fail(`${label}: ${failure.message}\n--- server stderr ---\n${stderr}`);
}

/** Disk use of a folder in MB: `du` where there is one, else the files' sizes added up. */
function sizeMb(dir) {
  const du = spawnSync('du', ['-sk', dir], { encoding: 'utf8' });
  if (du.status === 0) return Number(du.stdout.split(/\s/)[0]) / 1024;
  let bytes = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) bytes += statSync(p).size;
    }
  };
  walk(dir);
  return bytes / 2 ** 20;
}

// ------------------------------------------------------------------ the tarball's contents
const packDir = join(work, 'pack');
mkdirSync(packDir);
say('npm pack (a clean build of dist/ first: prepack, prepare)');
const packed = run('npm pack', 'npm', ['pack', '--json', '--pack-destination', packDir], { cwd: ROOT });
const manifest = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')))[0];
const tgz = join(packDir, manifest.filename);
const files = manifest.files.map((f) => f.path);
/** A view's HTML, built from views/NAME.ts. */
const VIEW = /^dist\/apps\/([a-z]+)\.html$/;
const SHIPPED = ['package.json', 'README.md', 'LICENSE', 'fixtures/demo.json'];
/** The tools' JSON Schemas and the stdio server's first tools/list answer, written beside the bundle by tools/build-schemas.mjs: made, not compiled from a source. */
const BUILT_JSON = ['dist/cli/tool-schemas.json', 'dist/cli/tool-list.json'];
const stray = files.filter(
  (f) => !SHIPPED.includes(f) && !BUILT_JSON.includes(f) && !(f.startsWith('dist/') && f.endsWith('.js')) && !VIEW.test(f),
);
if (stray.length)
  fail(
    `the tarball holds more than dist/*.js, the tools' schemas and list, the views' HTML, the demo fixture, README, LICENSE and package.json: ${stray.join(', ')}`,
  );
for (const f of [
  ...SHIPPED.slice(1),
  PKG.bin['workspace-mcp'],
  ...BUILT_JSON,
  'dist/apps/contacts.html',
  'dist/apps/account.html',
  'dist/apps/list.html',
])
  if (!files.includes(f)) fail(`the tarball lacks ${f}`);
// Each built file has its source: a module or view left in dist/ from a deleted source would ship.
// The command's bundle (tools/bundle.mjs): dist/cli/main.js and the bundle-*.js chunks it loads.
const BUNDLE_CHUNK = /^dist\/cli\/bundle-[^/]+\.js$/;
const bundled = loadedFiles();
const sourceOf = (f) =>
  VIEW.test(f) ? join(ROOT, 'views', `${VIEW.exec(f)[1]}.ts`) : join(ROOT, 'src', f.slice(5).replace(/\.js$/, '.ts'));
const orphans = files.filter((f) =>
  BUNDLE_CHUNK.test(f)
    ? !bundled.has(f.slice('dist/cli/'.length))
    : !BUILT_JSON.includes(f) && f.startsWith('dist/') && !existsSync(sourceOf(f)),
);
if (orphans.length) fail(`the tarball holds built files with no source: ${orphans.join(', ')}`);
say(
  `tarball ${manifest.filename}: ${files.length} files, ${(manifest.size / 1024).toFixed(0)} kB packed, ${(manifest.unpackedSize / 1024).toFixed(0)} kB unpacked`,
);

// ------------------------------------------------------------------ from the checkout
const cli = join(ROOT, 'dist', 'cli', 'main.js');
await mcpCheck('checkout: node /abs/path/dist/cli/main.js (the default database)', 'node', [cli]);
await mcpCheck('checkout: node /abs/path/dist/cli/main.js mcp --db FILE', 'node', [cli, 'mcp', '--db', join(work, 'checkout.db')]);
await mcpCheck('checkout: npm start', 'npm', ['start'], { cwd: ROOT });

const prefix = join(work, 'prefix');
say('npm link into a throw-away prefix');
run('npm link', 'npm', ['link', '--no-audit', '--no-fund'], { cwd: ROOT, env: shellEnv({ npm_config_prefix: prefix }) });
const linkedBin = WIN ? prefix : join(prefix, 'bin');
await mcpCheck('npm link: workspace-mcp from PATH', 'workspace-mcp', [], {
  env: serverEnv({ PATH: [linkedBin, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter) }),
});

// ------------------------------------------------------------------ the user route: the tarball
const app = join(work, 'app');
mkdirSync(app);
say(`npm install ${manifest.filename} into an empty folder (builds better-sqlite3 where no prebuilt binary fits)`);
const installed = run('npm install <tgz>', 'npm', ['install', '--no-audit', '--no-fund', tgz], { cwd: app });
const devPulled = Object.keys(PKG.devDependencies ?? {}).filter((d) => existsSync(join(app, 'node_modules', d)));
if (devPulled.length) fail(`the user install pulled devDependencies: ${devPulled.join(', ')}`);
const mb = sizeMb(join(app, 'node_modules'));
const bin = join(app, 'node_modules', '.bin', WIN ? 'workspace-mcp.cmd' : 'workspace-mcp');
await mcpCheck('tarball: node_modules/.bin/workspace-mcp with WORKSPACE_DB', bin, [], {
  cwd: app,
  env: serverEnv({ WORKSPACE_DB: join(work, 'tarball.db') }),
});
await mcpCheck('tarball: node …/node_modules/workspace-mcp/dist/cli/main.js mcp --db FILE', 'node', [
  join(app, 'node_modules', 'workspace-mcp', 'dist', 'cli', 'main.js'),
  'mcp',
  '--db',
  join(work, 'tarball2.db'),
]);
// `workspace-mcp demo` from the install: the shipped fixture seeded into the data folder (twice:
// the second run changes nothing), and the config it prints starts the server on it.
for (const round of ['first', 'second']) {
  const demo = run(`tarball: workspace-mcp demo (${round} run)`, bin, ['demo'], { cwd: app, env: serverEnv() });
  const block = /^\{\n[\s\S]*?\n\}$/m.exec(demo.stdout)?.[0];
  if (!block || !/^claude mcp add /m.test(demo.stdout.replace(/^ +/gm, '')))
    fail(`tarball: workspace-mcp demo printed no config block and claude mcp add line:\n${demo.stdout}`);
  if (round === 'second' && !/already/.test(demo.stdout))
    fail(`tarball: a second workspace-mcp demo did not say the data is already there:\n${demo.stdout}`);
  if (round === 'second') {
    const { command, args } = JSON.parse(block).mcpServers.workspace;
    await mcpCheck('tarball: the config workspace-mcp demo printed', command, args, { cwd: app });
  }
}
say('tarball: workspace-mcp demo seeded the shipped fixture, and said so on its second run');

const missed = [installed.seconds < 60 ? '' : 'over 60 s', mb < 100 ? '' : 'over 100 MB'].filter(Boolean);
const goal = missed.length ? `goal missed: ${missed.join(', ')}` : 'within the goal of 60 s and 100 MB';
const cpu = installed.cpuSeconds === undefined ? '' : ` (${installed.cpuSeconds.toFixed(1)} s of CPU)`;
say(`user install (npm install <tgz>): ${installed.seconds.toFixed(1)} s${cpu}, node_modules ${mb.toFixed(1)} MB (${goal})`);
// The figures for `npm run bench` (its install area reads the last BENCH_JSON line).
console.log(
  `BENCH_JSON ${JSON.stringify({ bench: 'install', tarball: manifest.filename, tarball_kb: Math.round(manifest.size / 1024), seconds: installed.seconds, cpu_seconds: installed.cpuSeconds, node_modules_mb: mb })}`,
);
say('every install route started and answered over MCP');
