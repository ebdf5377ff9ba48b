/**
 * The result budget, checked on every call a test makes: a client passed through
 * `withinBudget` fails the test when a tool result or a resource read, as JSON, is longer than
 * the budget the server was started with (100 000 characters unless a test sets another); a
 * raw JSON-RPC answer goes through `rawWithinBudget`.
 */
import { expect } from 'vitest';
import { RESULT_BUDGET } from '../../src/mcp/result/budget.js';

interface Calls {
  callTool(...args: any[]): Promise<unknown>;
  readResource(...args: any[]): Promise<unknown>;
}

/** `client`, with every callTool and readResource answer checked against `budget`. */
export function withinBudget<C extends Calls>(client: C, budget = RESULT_BUDGET): C {
  const c = client as Calls;
  const call = c.callTool.bind(client);
  const read = c.readResource.bind(client);
  c.callTool = async (...args) => {
    const result = await call(...args);
    expect(
      JSON.stringify(result).length,
      `${(args[0] as { name?: string }).name} result within the budget of ${budget}`,
    ).toBeLessThanOrEqual(budget);
    return result;
  };
  c.readResource = async (...args) => {
    const result = await read(...args);
    expect(
      JSON.stringify(result).length,
      `read of ${(args[0] as { uri?: string }).uri} within the budget of ${budget}`,
    ).toBeLessThanOrEqual(budget);
    return result;
  };
  return client;
}

/** A raw JSON-RPC `result` checked the same way when it is a tool result or a resource read. */
export function rawWithinBudget(result: unknown, budget = RESULT_BUDGET): void {
  if (result === null || typeof result !== 'object' || !('content' in result || 'contents' in result)) return;
  expect(JSON.stringify(result).length, `a raw result within the budget of ${budget}`).toBeLessThanOrEqual(budget);
}
