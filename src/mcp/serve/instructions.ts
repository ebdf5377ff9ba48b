/**
 * The server's `instructions`: the conventions every tool shares, said once here instead of in
 * each tool's description (clients put them before the model with the tools). Only tools that
 * are served are named.
 */

import { METHODS } from '../../api/catalog.js';
import { isMoney, type MethodDef } from '../../api/define.js';

/** The methods that move money, by name: those whose definition says so (`money`). */
const MONEY_METHODS = (METHODS as readonly MethodDef[]).filter(isMoney).map((m) => m.name);

/** The instructions for a server with these tools (their names, or whether a name is served) and this result budget. */
export function instructionsFor(tools: readonly string[] | ((name: string) => boolean), budget: number): string {
  const has = typeof tools === 'function' ? tools : (name: string) => tools.includes(name);
  const own = ['exportContacts', 'findContacts', 'getWorkspace'].filter(has);
  const lines = [
    "Tools for a chat-bot platform's Workspace API: one tool per API method, with its parameters" +
      (own.length ? `, and the server's own ${own.join(', ')}.` : '.'),
  ];
  if (has('getWorkspace'))
    lines.push(
      'Start with getWorkspace for your bot ids and project uuids; where a tool needs a bot_id, a left-out one means the default bot.',
    );
  if (has('findContacts')) {
    lines.push(
      'To find a person (by name, phone, email, @username or id) call findContacts: it gives their contact_id and accounts with balances.',
    );
  }
  // Said on the first line: the instructions stay within a few lines.
  if (has('previewBulk') && has('runBulk'))
    lines[0] +=
      ' To act on many contacts at once (everyone tagged vip, a bot since a date) use previewBulk, then runBulk with its plan_id: ' +
      'one confirmation, each contact once, not a tool call per contact.';
  const ids = [
    ...(has('getContactAccounts') ? ['account_id from getContactAccounts'] : []),
    ...(has('getContacts') && !has('findContacts') ? ['contact_id from getContacts'] : []),
    ...(has('getListSchemas') ? ['schema_id from getListSchemas'] : []),
  ];
  if (ids.length) lines.push(`Other ids come from the tools that list them (${ids.join(', ')}); never guess one.`);
  lines.push(
    'Amounts are integers in minor units of the currency: 10.00 USD is 1000 (JPY has no minor unit: 10 JPY is 10). ' +
      'Currency codes are ISO 4217 in capitals (USD).',
  );
  const money = MONEY_METHODS.filter(has);
  if (money.length) {
    lines.push(
      `Give ${money.join(' and ')} an idempotency_key, new for each move and the same on its retry: the money then moves once ` +
        '(the retry answers "replayed": true).',
    );
  }
  lines.push(
    `Pages count from 1. A result stays under ${budget} characters: past that its data is cut and "truncated": {kept, of, next} ` +
      'says how many items are shown of how many, and next holds the arguments that continue (null: none).' +
      (has('exportContacts') ? ' For every contact use exportContacts (a file, read in parts), not getContacts page by page.' : ''),
  );
  lines.push(
    'A result may carry "warnings": read them. A tool that answers nothing gives {}. ' +
      'An error is JSON {status, error, code, message, errors}: fix the arguments it names.',
  );
  return lines.join('\n');
}
