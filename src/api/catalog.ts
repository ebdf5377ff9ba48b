/** Every API method, collected from the resource files; the one list the adapters loop over. */
import { ownerMethods } from './owner.js';
import { contactAccountMethods } from './contact-accounts.js';
import { contactMethods } from './contacts.js';
import type { MethodDef } from './define.js';
import { listMethods } from './lists.js';
import { messageMethods } from './messages.js';
import { recordMethods } from './records.js';
import { referralMethods } from './referrals.js';
import { shortLinkMethods } from './short-links.js';
import { tagMethods } from './tags.js';
import { variableMethods } from './variables.js';

export const METHODS = [
  ...ownerMethods,
  ...listMethods,
  ...recordMethods,
  ...contactAccountMethods,
  ...contactMethods,
  ...variableMethods,
  ...tagMethods,
  ...messageMethods,
  ...referralMethods,
  ...shortLinkMethods,
] as const;

export type AnyMethod = (typeof METHODS)[number];
type MethodName = AnyMethod['name'];

const BY_NAME = new Map<string, MethodDef>();
for (const m of METHODS as readonly MethodDef[]) {
  BY_NAME.set(m.name, m);
  for (const a of m.aliases ?? []) BY_NAME.set(a, m);
}

/** The method a path segment names, by its name or an alias. */
export function findMethod(name: string): MethodDef | undefined {
  return BY_NAME.get(name);
}
