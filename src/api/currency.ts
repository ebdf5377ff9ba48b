/**
 * ISO 4217 currencies from a maintained data set (`currency-codes`): which codes exist and
 * their minor units (JPY 0, USD 2, BHD 3, CLF 4). `Intl` is no help: it accepts any code.
 */
import cc from 'currency-codes';

const DIGITS = new Map<string, number>(cc.data.map((c) => [c.code, c.digits]));

/** Whether `code` is an ISO 4217 code, in capitals. */
export function isCurrency(code: string): boolean {
  return DIGITS.has(code);
}

/** Minor units of a currency (its decimal places). */
export function minorUnits(code: string): number {
  return DIGITS.get(code) ?? 2;
}

/** `1234` USD → `12.34 USD`; `1200` JPY → `1200 JPY`; `1234` BHD → `1.234 BHD`. */
export function amountNote(amount: number, code: string): string {
  const digits = minorUnits(code);
  if (digits === 0) return `${amount} ${code}`;
  const s = String(amount).padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)} ${code}`;
}
