/**
 * ISO 4217 currencies from a maintained data set (`currency-codes`): which codes exist and
 * their minor units (JPY 0, USD 2, BHD 3, CLF 4). `Intl` is no help: it accepts any code.
 * And the one conversion of an amount in major units to minor units (`toMinor`), which the
 * Account view's bundle takes from here too: so this file imports no Node module.
 */

let digits: Map<string, number> | undefined;

/** Node's `createRequire`, asked of the running Node (no import: the views bundle this file for the browser). */
type NodeModule = { createRequire(url: string): (id: string) => unknown };
type CurrencyCodes = { data: ReadonlyArray<{ code: string; digits: number }> };

/** The table, read on first use: the MCP server's start (whose catalog imports this) does without it. */
function table(): Map<string, number> {
  if (!digits) {
    const node = (globalThis as unknown as { process: { getBuiltinModule(id: string): unknown } }).process;
    const { createRequire } = node.getBuiltinModule('node:module') as NodeModule;
    const cc = createRequire(import.meta.url)('currency-codes') as CurrencyCodes;
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

const MAJOR = /^\s*(\d{1,15})(?:([.,])(\d+))?\s*$/;

/**
 * An amount written in major units to minor units of a currency with `digits` decimal places:
 * `"12.34"` (or `"12,34"`) with 2 → 1234, `"5"` with 0 → 5. Never rounds: decimals past the
 * currency's own must be zeros after a point (`"100.00"` with 0 is 100; `"12.345"` with 2 and
 * `"0.5"` with 0 are refused), and after a comma there may be none past them, so a thousands
 * separator is never read as a decimal comma (`"1,000"` is refused, not 1 or 1.00). The answer
 * must be an integer a JSON client reads exactly; else undefined.
 */
export function toMinor(major: string, digits: number): number | undefined {
  const m = MAJOR.exec(major);
  if (!m) return undefined;
  const frac = m[3] ?? '';
  if (m[2] === ',' ? frac.length > digits : /[^0]/.test(frac.slice(digits))) return undefined;
  const n = Number(m[1]) * 10 ** digits + Number(frac.slice(0, digits).padEnd(digits, '0') || '0');
  return Number.isSafeInteger(n) ? n : undefined;
}
