/**
 * The browser lookup every browser test uses (test/helpers/browser.ts): CHROMIUM_PATH first,
 * then an installed Chromium or Chrome, then the one packaged in @sparticuz/chromium, and one
 * clear line where none can be had. Installed browsers are stand-in scripts on a PATH of their own.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { findBrowser, launchBrowser } from '../helpers/browser.js';
import { tempDir } from '../helpers/temp.js';

/** A folder holding an executable script under each name. */
function binDir(...names: string[]): string {
  const dir = tempDir();
  for (const n of names) writeFileSync(join(dir, n), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  return dir;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('which browser the browser tests drive', () => {
  test('CHROMIUM_PATH first, over one installed on PATH', async () => {
    const named = join(binDir('my-chrome'), 'my-chrome');
    vi.stubEnv('PATH', binDir('chromium'));
    vi.stubEnv('CHROMIUM_PATH', named);
    expect(await findBrowser()).toEqual({ path: named, from: 'CHROMIUM_PATH' });
  });

  test('an installed one next, chromium before chromium-browser and Chrome, on every PATH folder', async () => {
    vi.stubEnv('CHROMIUM_PATH', '');
    vi.stubEnv('WORKSPACE_TEST_BROWSER', '');
    const chrome = binDir('google-chrome-stable');
    const chromium = binDir('chromium');
    vi.stubEnv('PATH', [chrome, chromium].join(':'));
    expect(await findBrowser()).toEqual({ path: join(chromium, 'chromium'), from: 'this machine' });
    vi.stubEnv('PATH', [binDir(), chrome].join(':'));
    expect((await findBrowser()).path).toBe(join(chrome, 'google-chrome-stable'));
  });

  test('none installed (or WORKSPACE_TEST_BROWSER=packaged): the one in the npm package, unpacked outside the temp folder', async () => {
    vi.stubEnv('CHROMIUM_PATH', '');
    vi.stubEnv('PATH', binDir('chromium'));
    vi.stubEnv('WORKSPACE_TEST_BROWSER', 'packaged');
    const found = await findBrowser();
    expect(found.from).toMatch(/^@sparticuz\/chromium \d+\.\d+\.\d+$/);
    expect(found.path).toMatch(/node_modules\/\.cache\/sparticuz-chromium-[\d.]+\/chromium$/);
    // Its own NSS libraries and fonts: a bare machine has neither.
    expect(found.env?.LD_LIBRARY_PATH).toContain('al2023');
    expect(found.env?.FONTCONFIG_FILE).toMatch(/fonts\.conf$/);
  });

  test('a platform with none installed and no packaged build: one line saying what to do', async () => {
    vi.stubEnv('CHROMIUM_PATH', '');
    vi.stubEnv('PATH', binDir());
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
    Object.defineProperty(process, 'platform', { value: 'win32' });
    try {
      const err = await findBrowser().then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(
        /^No Chromium or Chrome found .*Linux x64 only \(this is win32 x64\): install Chrome or Chromium, or set CHROMIUM_PATH\.$/,
      );
    } finally {
      Object.defineProperty(process, 'platform', platform);
    }
  });

  test('a CHROMIUM_PATH that is no executable, or a binary that does not start: one line naming it', async () => {
    vi.stubEnv('CHROMIUM_PATH', join(binDir(), 'missing'));
    await expect(findBrowser()).rejects.toThrow(/^CHROMIUM_PATH=.*missing is not an executable file/);
    const broken = join(binDir('broken'), 'broken');
    vi.stubEnv('CHROMIUM_PATH', broken);
    const err = await launchBrowser().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toContain(`Chromium (CHROMIUM_PATH) could not start from ${broken}: `);
    expect(err?.message).not.toContain('\n');
  });
});
