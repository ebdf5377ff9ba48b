/** The money caps of `workspace-mcp mcp`: read from its flags and environment, and shown in its banner. */
import { readFileSync } from 'node:fs';
import { checkLimit, hasCaps, limitsOf, REMOTE_DEFAULTS, type MoneyPolicy } from '../mcp/money/caps.js';
import { UsageError } from './args.js';
import { expandHome } from './paths.js';

/**
 * The money caps: the remote mode's defaults, then `--money-policy FILE` (or
 * `$WORKSPACE_MONEY_POLICY`), then `--max-amount` / `--max-daily` (or their env), each over the last.
 */
export function moneyPolicy(values: Record<string, unknown>, remote: boolean): MoneyPolicy {
  const policy: MoneyPolicy = {
    maxAmount: remote ? { ...REMOTE_DEFAULTS.maxAmount } : {},
    maxDaily: remote ? { ...REMOTE_DEFAULTS.maxDaily } : {},
    noConfirm: values['no-confirm'] === true,
  };
  const file = (values['money-policy'] as string | undefined) ?? (process.env.WORKSPACE_MONEY_POLICY || undefined);
  try {
    if (file !== undefined) {
      let json: { max_amount?: unknown; max_daily?: unknown };
      try {
        json = JSON.parse(readFileSync(expandHome(file), 'utf8'));
      } catch (e) {
        throw new Error(`cannot be read as JSON: ${(e as Error).message}`);
      }
      if (json.max_amount !== undefined) policy.maxAmount = limitsOf(json.max_amount, 'max_amount');
      if (json.max_daily !== undefined) policy.maxDaily = limitsOf(json.max_daily, 'max_daily');
    }
  } catch (e) {
    throw new UsageError(`--money-policy ${file}: ${(e as Error).message}`);
  }
  const amount = (values['max-amount'] as string | undefined) ?? (process.env.WORKSPACE_MAX_AMOUNT || undefined);
  const daily = (values['max-daily'] as string | undefined) ?? (process.env.WORKSPACE_MAX_DAILY || undefined);
  try {
    if (amount !== undefined) policy.maxAmount = { '*': checkLimit(amount, '--max-amount') };
    if (daily !== undefined) policy.maxDaily = { '*': checkLimit(daily, '--max-daily') };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return policy;
}

/** The banner's money line: the caps, and loudly when confirmation is off. */
export function moneyLine(p: MoneyPolicy): string {
  const show = (l: Record<string, string>) =>
    Object.entries(l)
      .map(([c, v]) => (c === '*' ? v : `${v} ${c}`))
      .join(', ') || 'off';
  const caps = hasCaps(p) ? `caps ${show(p.maxAmount)} a call, ${show(p.maxDaily)} per account per 24 h` : 'no caps';
  return p.noConfirm ? `${caps}; confirmation is OFF (--no-confirm): calls over a cap move money without asking anyone` : caps;
}
