/** The key holder's own account: getMe (the key check) and getBalance. */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { Timestamp } from './shapes.js';

export const MeSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  created_at: Timestamp,
});
export type Me = z.infer<typeof MeSchema>;

export const getMe = defineMethod({
  name: 'getMe',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'Who am I',
  description:
    'Returns the account the API key belongs to (id, name, email, phone, created_at). Use it to check that a key works; it changes nothing.',
  params: {},
  result: z.object({ data: MeSchema }),
  annotations: READ,
});

export const accountMethods = [getMe] as const;
