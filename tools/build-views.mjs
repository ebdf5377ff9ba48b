#!/usr/bin/env node
/**
 * Builds the MCP Apps views (views/*.ts) into one self-contained HTML file each, dist/apps/NAME.html:
 * the script bundled and minified by esbuild and the shared stylesheet, both inline, nothing
 * loaded from the network (hosts' content security policies block that). Fails when a view
 * is over 150 KB. Run by `npm run build`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'apps');
const LIMIT = 150 * 1024;
// The currencies whose minor units are not 2, from the data set the server reads
// (src/api/currency.ts), so a view converts and shows amounts exactly as the server does.
const CURRENCY_DIGITS = Object.fromEntries(
  createRequire(import.meta.url)('currency-codes')
    .data.filter((c) => c.digits !== 2)
    .map((c) => [c.code, c.digits]),
);
const VIEWS = { contacts: 'Contacts', account: 'Account', list: 'List', bulk: 'Bulk plan' };

const css = (await build({ entryPoints: [join(ROOT, 'views', 'base.css')], bundle: true, minify: true, write: false, logLevel: 'silent' }))
  .outputFiles[0].text;

mkdirSync(OUT, { recursive: true });
const sizes = [];
for (const [name, title] of Object.entries(VIEWS)) {
  const js = (
    await build({
      entryPoints: [join(ROOT, 'views', `${name}.ts`)],
      bundle: true,
      minify: true,
      format: 'iife',
      target: 'es2020',
      define: { __CURRENCY_DIGITS__: JSON.stringify(CURRENCY_DIGITS) },
      write: false,
      logLevel: 'silent',
    })
  ).outputFiles[0].text;
  // Inline, a "</script" in the code would end the element early.
  const script = js.replace(/<\/script/gi, '<\\/script');
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${title}</title><style>${css}</style></head><body><main><h1 id="title">${title}</h1>` +
    `<div id="status" role="status" aria-live="polite">Waiting for the tool result…</div><div id="content"></div></main>` +
    `<script>${script}</script></body></html>\n`;
  const bytes = Buffer.byteLength(html);
  if (bytes > LIMIT) throw new Error(`the ${name} view is ${bytes} bytes, over the ${LIMIT} a view may weigh`);
  writeFileSync(join(OUT, `${name}.html`), html);
  sizes.push(`${name} ${(bytes / 1024).toFixed(1)} KB`);
}
process.stderr.write(`views: ${sizes.join(', ')}\n`);
