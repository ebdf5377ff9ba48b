/**
 * The README is the first fifteen minutes: short, with the commands CI runs, every tool named,
 * and links that go somewhere. Every relative link of README.md and docs/*.md names a file of
 * the repository and, with an #anchor, a heading of that file (as GitHub makes its anchors).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METHODS } from '../../src/api/catalog.js';
import { ROOT } from '../helpers/world.js';

const README = 'README.md';
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The text outside fenced code blocks and inline code, line by line (headings and links live there). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '');
  });
}

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as -, repeats numbered. */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of Markdown text (images too), as "target" with the line they are on. */
function links(text: string): Array<{ target: string; line: number }> {
  const out: Array<{ target: string; line: number }> = [];
  prose(text).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      out.push({ target, line: i + 1 });
    }
  });
  return out;
}

/** What is wrong with each relative link of `file` (its text, or `text`): "file:line: target (why)". */
function brokenLinks(file: string, text = read(file)): string[] {
  const bad: string[] = [];
  for (const { target, line } of links(text)) {
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const dest = path === '' ? file : normalize(join(dirname(file), decodeURI(path)));
    const where = `${file}:${line}: ${target}`;
    if (relative(ROOT, join(ROOT, dest)).startsWith('..')) bad.push(`${where} (outside the repository)`);
    else if (path !== '' && !existsSync(join(ROOT, dest))) bad.push(`${where} (no such file)`);
    else if (anchor !== undefined) {
      if (!dest.endsWith('.md') || (path !== '' && statSync(join(ROOT, dest)).isDirectory()))
        bad.push(`${where} (an anchor into a file that has no headings)`);
      else if (!anchors(dest === file ? text : read(dest)).has(anchor)) bad.push(`${where} (no heading #${anchor} in ${dest})`);
    }
  }
  return bad;
}

describe('the README', () => {
  it('is at most 250 lines: the first fifteen minutes, the rest in docs/', () => {
    expect(read(README).trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it('keeps its two commands, the ones CI and a newcomer run, under "Two commands"', () => {
    const text = read(README);
    const section = text.slice(text.indexOf('## Two commands'), text.indexOf('\n## ', text.indexOf('## Two commands') + 1));
    expect(section).toContain('npm ci && npm start');
    expect(section).toMatch(/^npm test\b/m);
  });

  it('says what it is and for whom before anything else', () => {
    const top = read(README).split('\n## ')[0]!;
    for (const word of ['MCP server', 'chat-bot platform', 'contacts', 'balances', 'tags', 'variables', 'messages', 'lists'])
      expect(top).toContain(word);
  });

  it("names every API method in its tools table, and each one's reference section exists", () => {
    const text = read(README);
    const api = anchors(read('docs/api.md'));
    for (const m of METHODS) {
      expect(text, m.name).toContain(`\`${m.name}\``);
      expect(api.has(m.name.toLowerCase()), m.name).toBe(true);
    }
  });

  it('links only to files that exist, and to headings they have (README.md and docs/*.md)', () => {
    const files = [README, ...DOCS];
    expect(files.length).toBeGreaterThan(5);
    expect(files.flatMap((f) => brokenLinks(f))).toEqual([]);
    // The README reaches every guide in docs/.
    const linked = new Set(links(read(README)).map((l) => normalize(l.target.split('#')[0]!)));
    expect(DOCS.filter((d) => !linked.has(d))).toEqual([]);
  });

  it('the link check finds a missing file, a missing heading and a link out of the repository', () => {
    // The same check over planted text: it must be able to fail.
    const text = [
      '# Title',
      '## A heading',
      '[ok](#a-heading) [gone](#nope) [file](missing.md) [up](../../x.md) [doc](layout.md#layout) [doc gone](layout.md#nope)',
      '```',
      '[code](ignored.md)',
      '```',
      '`[inline](ignored-too.md)` [web](https://example.com/x.md)',
    ].join('\n');
    expect(brokenLinks('docs/planted.md', text)).toEqual([
      'docs/planted.md:3: #nope (no heading #nope in docs/planted.md)',
      'docs/planted.md:3: missing.md (no such file)',
      'docs/planted.md:3: ../../x.md (outside the repository)',
      'docs/planted.md:3: layout.md#nope (no heading #nope in docs/layout.md)',
    ]);
    expect(anchors(text)).toEqual(new Set(['title', 'a-heading']));
    expect(anchors('## Money safety\n## Money safety\n## MCP Apps: views in the chat\n')).toEqual(
      new Set(['money-safety', 'money-safety-1', 'mcp-apps-views-in-the-chat']),
    );
  });
});
