#!/usr/bin/env node
/**
 * The size of the tool surface, as a model pays for it: starts the built server over stdio on a
 * new database in a temp folder (every tool on), asks tools/list with the SDK's clients of both
 * protocol eras (the v1 client at 2025-11-25, the v2 one pinned to 2026-07-28) and prints, per
 * tool, the model-visible characters (name + description + JSON of inputSchema), the same as hosts
 * send them to a model (the JSON of name, description and input_schema: the budget's figure), the
 * description alone and the whole tool's JSON; then the totals of each era
 * beside the budgets. `--json` prints the figures as JSON instead; `--markdown` as a table.
 *
 *   npm run build && node tools/tool-budget.mjs [--json | --markdown]
 *
 * Exit status 1 when a figure is over its budget (src/mcp/tool-text.ts, which the budget test
 * reads too).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio } from '@modelcontextprotocol/client/stdio';
import { measureTools, overBudget, TOOL_BUDGET } from '../dist/mcp/tool-text.js';

const INFO = { name: 'tool-budget', version: '1.0.0' };

/** JSON with every object's keys sorted: the v1 client's parse reorders some keys, which says nothing. */
function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, canonical(v[k])]),
  );
}

/** tools/list and the instructions as a client of `era` gets them from the built server over stdio. */
async function listOf(era, server) {
  const client = era === '2025-11-25' ? new V1Client(INFO) : new V2Client(INFO, { versionNegotiation: { mode: { pin: era } } });
  const transport = era === '2025-11-25' ? new V1Stdio(server) : new V2Stdio(server);
  try {
    await client.connect(transport);
    return { list: await client.listTools(), instructions: client.getInstructions() ?? '' };
  } finally {
    await client.close();
  }
}

async function main() {
  const mode = process.argv.includes('--json') ? 'json' : process.argv.includes('--markdown') ? 'markdown' : 'text';
  const dir = mkdtempSync(join(tmpdir(), 'tool-budget-'));
  const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
  const env = { ...process.env, WORKSPACE_DATA_DIR: dir };
  delete env.WORKSPACE_API_KEY;
  delete env.WORKSPACE_BASE_URL;
  const server = { command: process.execPath, args: [cli, 'mcp', '--db', join(dir, 'db.sqlite')], env, stderr: 'ignore' };
  let m;
  const eras = {};
  try {
    for (const era of ['2025-11-25', '2026-07-28']) {
      const { list, instructions } = await listOf(era, server);
      eras[era] = {
        ...measureTools(list),
        instructions: instructions.length,
        same: JSON.stringify(canonical(list.tools.map(({ execution: _, ...t }) => t))),
      };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // The per-tool figures are the 2025 client's; each era's totals follow them.
  m = eras['2025-11-25'];
  const sameTools = eras['2025-11-25'].same === eras['2026-07-28'].same;
  for (const e of Object.values(eras)) delete e.same;
  m = {
    ...m,
    eras: Object.fromEntries(
      Object.entries(eras).map(([era, e]) => [
        era,
        {
          count: e.count,
          visible: e.visible,
          sent: e.sent,
          total: e.total,
          longestDescription: e.longestDescription,
          instructions: e.instructions,
        },
      ]),
    ),
    sameTools,
  };
  if (mode === 'json') process.stdout.write(JSON.stringify(m, null, 2) + '\n');
  else if (mode === 'markdown') {
    const rows = m.tools.map((t) => `| ${t.name} | ${t.visible} | ${t.sent} | ${t.description} | ${t.input} | ${t.output} | ${t.whole} |`);
    process.stdout.write(
      [
        '| tool | visible | sent | description | input schema | output schema | whole |',
        '|---|---|---|---|---|---|---|',
        ...rows,
        `| **${m.count} tools** | **${m.visible}** | **${m.sent}** | | | | **${m.total}** (tools/list) |`,
      ].join('\n') + '\n',
    );
    process.stdout.write(
      [
        '',
        '| era | tools | model-visible | as sent | tools/list | longest description | instructions |',
        '|---|---|---|---|---|---|---|',
        ...Object.entries(m.eras).map(
          ([era, e]) => `| ${era} | ${e.count} | ${e.visible} | ${e.sent} | ${e.total} | ${e.longestDescription} | ${e.instructions} |`,
        ),
      ].join('\n') +
        `\n\nThe tools are ${m.sameTools ? 'the same, key for key,' : 'NOT the same'} in both eras (but runBulk's 2025-11-25 \`execution\`: tasks).\n`,
    );
  } else {
    const pad = Math.max(...m.tools.map((t) => t.name.length));
    process.stdout.write(`${'tool'.padEnd(pad)}  visible   sent  descr  input  output  whole\n`);
    for (const t of m.tools) {
      process.stdout.write(
        `${t.name.padEnd(pad)}  ${String(t.visible).padStart(7)}  ${String(t.sent).padStart(5)}  ${String(t.description).padStart(5)}  ${String(t.input).padStart(5)}  ${String(t.output).padStart(6)}  ${String(t.whole).padStart(5)}\n`,
      );
    }
    process.stdout.write('\n');
    for (const [era, e] of Object.entries(m.eras)) {
      process.stdout.write(
        `${era}: ${e.count} tools; model-visible ${e.visible}, as hosts send it ${e.sent} (budget ${TOOL_BUDGET.visible}); tools/list ${e.total} (budget ${TOOL_BUDGET.total}); ` +
          `longest description ${e.longestDescription} (budget ${TOOL_BUDGET.description}); instructions ${e.instructions}\n`,
      );
    }
    process.stdout.write(
      `The tools are ${m.sameTools ? 'the same, key for key,' : 'NOT the same'} in both eras (but runBulk's 2025-11-25 execution: tasks).\n`,
    );
  }
  const over = [...Object.entries(m.eras).flatMap(([era, e]) => overBudget({ ...e, tools: m.tools }).map((line) => `${era}: ${line}`))];
  if (!m.sameTools) over.push('the eras list different tools');
  for (const line of over) process.stderr.write(`over budget: ${line}\n`);
  process.exitCode = over.length ? 1 : 0;
}

await main();
