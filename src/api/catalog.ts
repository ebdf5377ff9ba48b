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
/** The name of an API method (not an alias): what `Backend.call` takes, so a misspelt one fails to compile. */
export type MethodName = AnyMethod['name'];

/** A method of the catalog: a definition whose name is a MethodName. */
export type CatalogMethod = MethodDef<MethodName>;

const BY_NAME = new Map<string, CatalogMethod>();
for (const m of METHODS as readonly CatalogMethod[]) {
  BY_NAME.set(m.name, m);
  for (const a of m.aliases ?? []) BY_NAME.set(a, m);
}

/** The method a path segment names, by its name or an alias. */
export function findMethod(name: string): CatalogMethod | undefined {
  return BY_NAME.get(name);
}
