/**
 * ISO 4217 currencies from a maintained data set (`currency-codes`): which codes exist and
 * their minor units (JPY 0, USD 2, BHD 3, CLF 4). `Intl` is no help: it accepts any code.
 */
import { createRequire } from 'node:module';

let digits: Map<string, number> | undefined;

/** The table, read on first use: the MCP server's start (whose catalog imports this) does without it. */
function table(): Map<string, number> {
  if (!digits) {
    const cc = createRequire(import.meta.url)('currency-codes') as typeof import('currency-codes');
    digits = new Map<string, number>(cc.data.map((c) => [c.code, c.digits]));
  }
  return digits;
}

/** Whether `code` is an ISO 4217 code, in capitals. */
export function isCurrency(code: string): boolean {
  return table().has(code);
}

/** Minor units of a currency (its decimal places). */
export function minorUnits(code: string): number {
  return table().get(code) ?? 2;
}

/** `1234` USD → `12.34 USD`; `1200` JPY → `1200 JPY`; `1234` BHD → `1.234 BHD`. */
export function amountNote(amount: number, code: string): string {
  const digits = minorUnits(code);
  if (digits === 0) return `${amount} ${code}`;
  const s = String(amount).padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)} ${code}`;
}
