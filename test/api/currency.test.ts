/** ISO 4217 minor units come from the ISO table; Intl disagrees on IDR, COP, HUF, IQD. */
import { describe, expect, it } from 'vitest';
import { amountNote, isCurrency, minorUnits } from '../../src/api/currency.js';

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
