/**
 * The layers of src/ as docs/layout.md states them: lower layers never import upper
 * ones, and the adapters (`remote`, `mcp`) import the contract (`api`) only. Imports are read
 * with the TypeScript parser (static, type-only, re-exports and dynamic `import()` alike); a
 * forbidden edge or an import cycle fails here, naming the files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { ROOT } from './helpers/world.js';

const SRC = join(ROOT, 'src');

/**
 * What each layer may import besides itself. A module of src/common/ (the logger, the body
 * reader, key order, the 429 loop) is neutral: it imports nothing of ours, and anyone may import it.
 */
export const MAY_IMPORT: Record<string, readonly string[] | '*'> = {
  api: [],
  store: ['api'],
  service: ['api', 'store'],
  http: ['api', 'service'],
  remote: ['api'],
  mcp: ['api'],
  oauth: [],
  state: ['api', 'store', 'mcp', 'oauth'],
  cli: '*',
  common: [],
};

/** The layer of a path relative to src/: its first folder, or the file for a top-level module. */
function layerOf(file: string): string {
  return file.split('/')[0]!;
}

/** A module of src/common/: neutral. */
function isNeutral(file: string): boolean {
  return file.startsWith('common/');
}

/** Every import edge between modules of src/, as paths relative to src/. */
function importGraph(): Map<string, string[]> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) files.push(p);
    }
  };
  walk(SRC);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const info = ts.preProcessFile(readFileSync(f, 'utf8'), true, true);
    const targets = info.importedFiles
      .map((i) => i.fileName)
      .filter((n) => n.startsWith('.'))
      .map((n) =>
        relative(SRC, resolve(dirname(f), n.replace(/\.js$/, '.ts')))
          .split('\\')
          .join('/'),
      );
    graph.set(relative(SRC, f).split('\\').join('/'), targets);
  }
  return graph;
}

/** The edges the rules forbid, as `from -> to` lines. */
export function forbiddenEdges(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const layer = layerOf(from);
    for (const to of targets) {
      const target = layerOf(to);
      if (target === layer) continue;
      if (isNeutral(to) && !isNeutral(from)) continue;
      const allowed = isNeutral(from) ? [] : MAY_IMPORT[layer];
      if (allowed === '*') continue;
      if (!allowed?.includes(target)) out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

/** Import cycles (each as the files around it), found by a depth-first walk. */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 'open') found.push(stack.slice(stack.indexOf(m)));
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return found;
}

/**
 * The rooms of src/mcp from the top down: a file imports only files of its own room or of a
 * room below it. The shared few at the top of src/mcp sit in two rooms: `context.ts` and
 * `tool-spec.ts` (what every tool gets) above money and results, the rest (the state's
 * interfaces, logging, the search shapes, ids seen, the tool text's figures) at the bottom.
 */
export const MCP_ROOMS: ReadonlyArray<readonly string[]> = [
  ['serve/'],
  ['auth/'],
  ['composite/'],
  ['tools/'],
  ['context.ts', 'tool-spec.ts'],
  ['money/', 'remote/'],
  ['result/'],
  ['state.ts', 'logging.ts', 'contact-search.ts', 'seen.ts', 'tool-text.ts'],
];

function mcpRoomOf(file: string): number {
  const inner = file.slice('mcp/'.length);
  const i = MCP_ROOMS.findIndex((room) => room.some((r) => (r.endsWith('/') ? inner.startsWith(r) : inner === r)));
  if (i < 0) throw new Error(`${file} is in no room of src/mcp: add it to MCP_ROOMS and docs/layout.md`);
  return i;
}

/** Imports inside src/mcp that run up (to a room above) or sideways between two rooms of one rank's different folders. */
export function mcpRoomEdgesUp(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    if (!from.startsWith('mcp/')) continue;
    for (const to of targets) if (to.startsWith('mcp/') && mcpRoomOf(to) < mcpRoomOf(from)) out.push(`${from} -> ${to}`);
  }
  return out;
}

describe('the checker', () => {
  test('flags an adapter reaching past the contract, and a cycle', () => {
    const g = new Map([
      ['mcp/tools.ts', ['api/catalog.ts', 'store/index.ts', 'common/log.ts']],
      ['remote/client.ts', ['service/backend.ts']],
      ['api/catalog.ts', ['common/log.ts']],
      ['common/log.ts', ['api/errors.ts']],
      ['store/index.ts', ['store/admin.ts']],
      ['store/admin.ts', ['store/index.ts']],
    ]);
    expect(forbiddenEdges(g)).toEqual([
      'mcp/tools.ts -> store/index.ts',
      'remote/client.ts -> service/backend.ts',
      'common/log.ts -> api/errors.ts',
    ]);
    expect(cycles(g)).toEqual([['store/index.ts', 'store/admin.ts']]);
  });

  test('flags an import that runs up the rooms of src/mcp, and a file in no room', () => {
    const g = new Map([
      ['mcp/result/results.ts', ['mcp/tools/schemas.ts', 'mcp/state.ts']],
      ['mcp/serve/server.ts', ['mcp/composite/apps.ts', 'mcp/result/results.ts']],
    ]);
    expect(mcpRoomEdgesUp(g)).toEqual(['mcp/result/results.ts -> mcp/tools/schemas.ts']);
    expect(() => mcpRoomEdgesUp(new Map([['mcp/stray.ts', ['mcp/state.ts']]]))).toThrow(/in no room/);
  });
});

describe('src/', () => {
  const graph = importGraph();

  test('every folder of src/ is a layer with rules', () => {
    const layers = new Set([...graph.keys()].map(layerOf));
    expect([...layers].filter((l) => !(l in MAY_IMPORT))).toEqual([]);
    // Nothing loose at the top of src/.
    expect([...graph.keys()].filter((f) => !f.includes('/'))).toEqual([]);
    expect([...graph.keys()].filter(isNeutral).sort()).toEqual([
      'common/drain.ts',
      'common/frozen.ts',
      'common/log.ts',
      'common/loopback.ts',
      'common/ordered.ts',
      'common/read-body.ts',
      'common/retry.ts',
      'common/telemetry.ts',
    ]);
  });

  test('lower layers never import upper ones; remote and mcp import the contract only', () => {
    expect(forbiddenEdges(graph)).toEqual([]);
  });

  test('no import cycles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  test('inside src/mcp each room imports only the rooms below it (docs/layout.md)', () => {
    expect(mcpRoomEdgesUp(graph)).toEqual([]);
  });

  test('docs/layout.md states these same rules', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'layout.md'), 'utf8');
    const layout = doc.slice(doc.indexOf('## Layout'));
    const stated: Record<string, readonly string[] | '*'> = {};
    for (const m of layout.matchAll(/^\| `(\w+)` \| (.+) \|$/gm)) {
      stated[m[1]!] = m[2] === 'everything' ? '*' : m[2] === 'nothing' ? [] : [...m[2]!.matchAll(/`(\w+)`/g)].map((x) => x[1]!);
    }
    expect(stated).toEqual(MAY_IMPORT);
  });
});
