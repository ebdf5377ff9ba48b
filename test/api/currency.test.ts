/** ISO 4217 minor units come from the ISO table; Intl disagrees on IDR, COP, HUF, IQD. */
import { describe, expect, it } from 'vitest';
import { amountNote, isCurrency, minorUnits, toMinor } from '../../src/api/currency.js';

describe('ISO 4217', () => {
  it('minor units as ISO gives them', () => {
    expect([minorUnits('JPY'), minorUnits('USD'), minorUnits('BHD'), minorUnits('CLF'), minorUnits('IQD')]).toEqual([0, 2, 3, 4, 3]);
    expect([minorUnits('COP'), minorUnits('IDR'), minorUnits('HUF')]).toEqual([2, 2, 2]);
  });
  it('knows real codes only, in capitals', () => {
    expect(isCurrency('EUR')).toBe(true);
    expect(isCurrency('eur')).toBe(false);
    expect(isCurrency('ABC')).toBe(false);
  });
  it('amount_note is major units and the code', () => {
    expect(amountNote(1234, 'USD')).toBe('12.34 USD');
    expect(amountNote(5, 'USD')).toBe('0.05 USD');
    expect(amountNote(1200, 'JPY')).toBe('1200 JPY');
    expect(amountNote(1234, 'BHD')).toBe('1.234 BHD');
    expect(amountNote(0, 'EUR')).toBe('0.00 EUR');
  });
});

describe('toMinor: major units to minor units, never rounded', () => {
  it('converts an amount written in major units', () => {
    expect(toMinor('12.34', 2)).toBe(1234);
    expect(toMinor('12.5', 2)).toBe(1250);
    expect(toMinor('12,5', 2)).toBe(1250);
    expect(toMinor(' 7 ', 2)).toBe(700);
    expect(toMinor('0.05', 2)).toBe(5);
    expect(toMinor('1200', 0)).toBe(1200);
    expect(toMinor('1.234', 3)).toBe(1234);
  });
  it("takes decimals past the currency's own only when they are zeros", () => {
    expect(toMinor('100.00', 0)).toBe(100);
    expect(toMinor('12.340', 2)).toBe(1234);
  });
  it("refuses decimals past the currency's own that are not zeros, rather than dropping them", () => {
    expect(toMinor('12.345', 2)).toBeUndefined();
    expect(toMinor('0.5', 0)).toBeUndefined();
    expect(toMinor('100.001', 2)).toBeUndefined();
  });
  it('never reads a thousands separator as a decimal comma: "1,000" is refused, not 1 or 1.00', () => {
    expect(toMinor('1,000', 0)).toBeUndefined();
    expect(toMinor('1,000', 2)).toBeUndefined();
    expect(toMinor('2,000', 0)).toBeUndefined();
    expect(toMinor('1,00', 0)).toBeUndefined();
    expect(toMinor('1,00', 2)).toBe(100);
    expect(toMinor('1,234', 3)).toBe(1234);
  });
  it('refuses what is not an amount, or one no JSON client reads exactly', () => {
    for (const text of ['', '-1', '1e3', '12.', '.5', '1 000', 'abc', '1.2.3']) expect(toMinor(text, 2), text).toBeUndefined();
    expect(toMinor('999999999999999', 4)).toBeUndefined();
    expect(toMinor('90071992547409', 2)).toBe(9_007_199_254_740_900);
  });
});
