/** The money caps' limits in minor units: written per currency they must be exact; a `*` limit is cut to each currency's unit. */
import { expect, test } from 'vitest';
import { capsFor, limitsOf } from '../../src/mcp/money/caps.js';

test('a limit written for one currency finer than its minor unit is refused when the policy is read, never rounded', () => {
  expect(() => limitsOf({ JPY: '100.5' }, 'max_amount')).toThrow(/max_amount\.JPY: 100\.5 is not a whole number of JPY's minor units/);
  expect(() => limitsOf({ USD: '1.005' }, 'max_amount')).toThrow(/USD/);
  expect(limitsOf({ JPY: '100.00', USD: '1.50', '*': '2.505' }, 'max_amount')).toEqual({ JPY: '100.00', USD: '1.50', '*': '2.505' });
});

test("a `*` limit in each currency's minor units: decimals past the currency's own cut (a most: 2.50 JPY allows what 2 JPY allows)", () => {
  const policy = { maxAmount: { '*': '2.50' }, maxDaily: { '*': '500.00', BHD: '1.234' }, noConfirm: false };
  expect(capsFor(policy, 'USD')).toEqual({ perCall: 250, daily: 50000 });
  expect(capsFor(policy, 'JPY')).toEqual({ perCall: 2, daily: 500 });
  expect(capsFor(policy, 'BHD')).toEqual({ perCall: 2500, daily: 1234 });
  expect(capsFor({ ...policy, maxAmount: { '*': 'off' } }, 'USD')).toEqual({ daily: 50000 });
});
