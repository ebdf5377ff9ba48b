/** The key holder (the owner) itself: getMe (the key check) and getBalance, its platform balance. */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { Timestamp } from './shapes.js';

const MeSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  created_at: Timestamp,
});
export type Me = z.infer<typeof MeSchema>;

const getMe = defineMethod({
  name: 'getMe',
  title: 'Who am I',
  description: 'The account the API key belongs to (id, name, email, phone, created_at); checks that the key works.',
  params: {},
  result: z.object({ data: MeSchema }),
  annotations: READ,
});

const BalanceSchema = z.object({
  balance: z.number().int().describe('Balance in MINOR units of the currency (cents for USD)'),
  currency: z.string().describe('ISO 4217 code, e.g. USD'),
});
export type Balance = z.infer<typeof BalanceSchema>;

const getBalance = defineMethod({
  name: 'getBalance',
  title: 'Platform balance',
  description: "Your own balance with the platform (what pays for the service); not a contact's account (getContactAccounts).",
  params: {},
  result: z.object({ data: BalanceSchema }),
  annotations: READ,
});

export const ownerMethods = [getMe, getBalance] as const;
