/**
 * The tools' JSON Schemas the build writes beside the command's bundle (tools/build-schemas.mjs)
 * and the server lists instead of making them from zod on its first tools/list
 * (src/mcp/tools/schemas.ts): the built command lists, tool for tool, what the sources make
 * (a file left stale or made wrong would show), and what it lists is the file's.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { BUILT_SCHEMAS_FILE } from '../../src/mcp/tools/schemas.js';
import { CLI, cliEnv, INITIALIZE, spawnRpc } from '../helpers/cli.js';
import { tempDir } from '../helpers/world.js';
import { connectInMemory } from '../mcp/clients.js';
import { useMcp } from '../mcp/harness.js';

type Listed = { name: string; inputSchema: unknown; outputSchema?: unknown };

const startMcp = useMcp();

/** tools/list of the command at `cli` (a stdio server on a new database). */
async function builtList(cli = CLI): Promise<Listed[]> {
  const rpc = spawnRpc(['mcp', '--db', join(tempDir(), 'w.db')], cliEnv(), cli);
  try {
    rpc.send({ ...INITIALIZE, id: 1 });
    rpc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    rpc.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    return (await rpc.answer(2)).result.tools;
  } finally {
    rpc.proc.kill();
  }
}

test('the built command lists every tool with the schemas the sources make', async () => {
  const built = await builtList();
  const world = await startMcp();
  const client = await connectInMemory('2025-11-25', world.factory);
  try {
    const made = (await client.listTools()).tools as Listed[];
    const of = (tools: Listed[]) =>
      Object.fromEntries(tools.map((t) => [t.name, { input: t.inputSchema, output: t.outputSchema ?? null }]));
    expect(built.map((t) => t.name).sort()).toEqual(made.map((t) => t.name).sort());
    expect(of(built)).toEqual(of(made));
    // And the file holds each of them as listed.
    const file = JSON.parse(readFileSync(join(dirname(CLI), BUILT_SCHEMAS_FILE), 'utf8')) as Record<
      string,
      { input: unknown; output?: unknown }
    >;
    for (const t of made)
      expect({ name: t.name, ...file[t.name] }).toEqual({
        name: t.name,
        input: t.inputSchema,
        ...(t.outputSchema ? { output: t.outputSchema } : {}),
      });
  } finally {
    await client.close();
  }
});

test("what the server lists is the build's file: a copy of the bundle with a changed file lists the change", async () => {
  // A copy beside the bundle, so that its imports resolve as the bundle's do.
  const copy = join(dirname(dirname(CLI)), `.schemas-test-${randomUUID()}`);
  cpSync(dirname(CLI), copy, { recursive: true });
  // Without the build's whole answer (tool-list-early.test.ts), the first tools/list is the wired server's.
  rmSync(join(copy, 'tool-list.json'));
  try {
    const file = join(copy, BUILT_SCHEMAS_FILE);
    type Entry = { input: Record<string, unknown>; output?: Record<string, unknown> };
    const schemas = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Entry>;
    // A method tool's input and output, a composite tool's input and output.
    const mark = (tool: string, which: keyof Entry) =>
      (schemas[tool]![which] = { ...schemas[tool]![which]!, description: `${tool} ${which}` });
    for (const [tool, which] of [
      ['getMe', 'input'],
      ['getContacts', 'output'],
      ['findContacts', 'input'],
      ['exportContacts', 'output'],
      ['previewBulk', 'input'],
      ['runBulk', 'input'],
    ] as const)
      mark(tool, which);
    writeFileSync(file, JSON.stringify(schemas));
    const tools = await builtList(join(copy, 'main.js'));
    const listed = (tool: string) => tools.find((t) => t.name === tool)!;
    expect(listed('getMe').inputSchema).toMatchObject({ description: 'getMe input' });
    expect(listed('getContacts').outputSchema).toMatchObject({ description: 'getContacts output' });
    expect(listed('findContacts').inputSchema).toMatchObject({ description: 'findContacts input' });
    expect(listed('exportContacts').outputSchema).toMatchObject({ description: 'exportContacts output' });
    expect(listed('previewBulk').inputSchema).toMatchObject({ description: 'previewBulk input' });
    expect(listed('runBulk').inputSchema).toMatchObject({ description: 'runBulk input' });
    // Without the file, the same copy makes them from zod, as the sources do.
    rmSync(file);
    const made = await builtList(join(copy, 'main.js'));
    expect(made.find((t) => t.name === 'getMe')!.inputSchema).not.toHaveProperty('description');
    expect(made).toEqual(await builtList());
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});
