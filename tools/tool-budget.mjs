#!/usr/bin/env node
/**
 * The size of the tool surface, as a model pays for it: starts the built server over stdio on a
 * new database in a temp folder (every tool on), asks tools/list with the SDK's client and prints,
 * per tool, the model-visible characters (name + description + JSON of inputSchema, what hosts
 * send to a model), the description alone and the whole tool's JSON; then the totals beside
 * the budgets. `--json` prints the figures as JSON instead; `--markdown` as a table.
 *
 *   npm run build && node tools/tool-budget.mjs [--json | --markdown]
 *
 * Exit status 1 when a figure is over its budget (src/mcp/tool-budget.ts, which the budget test
 * reads too).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { measureTools, overBudget, TOOL_BUDGET } from '../dist/mcp/tool-budget.js';

async function main() {
  const mode = process.argv.includes('--json') ? 'json' : process.argv.includes('--markdown') ? 'markdown' : 'text';
  const dir = mkdtempSync(join(tmpdir(), 'tool-budget-'));
  const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
  const env = { ...process.env, WORKSPACE_DATA_DIR: dir };
  delete env.WORKSPACE_API_KEY;
  delete env.WORKSPACE_BASE_URL;
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', '--db', join(dir, 'db.sqlite')], env, stderr: 'ignore' });
  const client = new Client({ name: 'tool-budget', version: '1.0.0' });
  let m;
  try {
    await client.connect(transport);
    m = measureTools(await client.listTools());
    m.instructions = (client.getInstructions() ?? '').length;
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (mode === 'json') process.stdout.write(JSON.stringify(m, null, 2) + '\n');
  else if (mode === 'markdown') {
    const rows = m.tools.map((t) => `| ${t.name} | ${t.visible} | ${t.description} | ${t.input} | ${t.output} | ${t.whole} |`);
    process.stdout.write(
      ['| tool | visible | description | input schema | output schema | whole |', '|---|---|---|---|---|---|', ...rows,
        `| **${m.count} tools** | **${m.visible}** | | | | **${m.total}** (tools/list) |`].join('\n') + '\n',
    );
  } else {
    const pad = Math.max(...m.tools.map((t) => t.name.length));
    process.stdout.write(`${'tool'.padEnd(pad)}  visible  descr  input  output  whole\n`);
    for (const t of m.tools) {
      process.stdout.write(
        `${t.name.padEnd(pad)}  ${String(t.visible).padStart(7)}  ${String(t.description).padStart(5)}  ${String(t.input).padStart(5)}  ${String(t.output).padStart(6)}  ${String(t.whole).padStart(5)}\n`,
      );
    }
    process.stdout.write(
      `\n${m.count} tools; model-visible ${m.visible} (budget ${TOOL_BUDGET.visible}); tools/list ${m.total} (budget ${TOOL_BUDGET.total}); ` +
        `longest description ${m.longestDescription} (budget ${TOOL_BUDGET.description}); instructions ${m.instructions}\n`,
    );
  }
  const over = overBudget(m);
  for (const line of over) process.stderr.write(`over budget: ${line}\n`);
  process.exitCode = over.length ? 1 : 0;
}

await main();
