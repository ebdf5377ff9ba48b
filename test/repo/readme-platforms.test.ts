/**
 * The README tells a newcomer what `--remote` should be (the Leadteh family's platforms, at
 * `https://<host>/api/v1`) and which of this server's methods the family's published lists lack,
 * in the catalog's own names and count; and it shows, near the top, a picture of what a person
 * sees, with alt text, from a file that exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { METHODS } from '../../src/api/catalog.js';
import { ROOT } from '../helpers/world.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

test('the platforms that speak the API are named beside --remote, with the methods they may lack', () => {
  const at = README.indexOf('**Which platforms speak this API.**');
  expect(at).toBeGreaterThan(README.indexOf('--remote https://host/api/v1'));
  const para = README.slice(at, README.indexOf('\n\n', at));
  for (const name of ['Leadteh', 'Watbot', 'CleverApp', 'OneBot', 'JetBot']) expect(para).toContain(name);
  expect(para).toMatch(/https:\/\/<its host>\/api\/v1/);
  expect(para).toContain(`Of this server's ${METHODS.length} methods`);
  const names = new Set(METHODS.map((m) => m.name as string));
  const lacking = /published method lists: ([^(]+)\(/.exec(para.replace(/\s+/g, ' '))![1]!.match(/`(\w+)`/g)!;
  expect(lacking.length).toBeGreaterThan(0);
  for (const m of lacking) expect(names.has(m.slice(1, -1)), m).toBe(true);
});

test('a picture of what a person sees sits near the top, with alt text, and its file exists', () => {
  const top = README.split('\n').slice(0, 25).join('\n');
  const img = /!\[([^\]]+)\]\(([^)]+\.png)\)/.exec(top);
  expect(img, 'an image in the first 25 lines').toBeTruthy();
  expect(img![1]!.length).toBeGreaterThan(40);
  expect(existsSync(join(ROOT, img![2]!))).toBe(true);
});
