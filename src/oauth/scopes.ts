/**
 * What a person lets their assistant do: the four scopes (the same as `SCOPES` of
 * `api/scopes.ts`, which this layer may not import; a test holds them equal), their plain words
 * for the consent page, and the rules every endpoint reads a scope by: `workspace` means all
 * four (grants made before scopes hold it), `workspace:read` is always granted, unknown values
 * are ignored, and nothing is held beyond the deployment's cap (`--scopes`).
 */

export const SCOPES = ['workspace:read', 'workspace:write', 'workspace:money', 'workspace:message'] as const;
export type Scope = (typeof SCOPES)[number];

/** All four at once: what a sign-in asked before there were scopes, and what a full one asks still. */
export const ALL = 'workspace';
export const READ: Scope = 'workspace:read';

/** Each scope as the consent page explains it. */
export const SCOPE_WORDS: Record<Scope, string> = {
  'workspace:read': 'See your lists, contacts, balances and messages (always granted)',
  'workspace:write': 'Change your lists, records, tags, variables and contacts',
  'workspace:money': "Move money: top up and debit your contacts' accounts",
  'workspace:message': 'Send messages to your contacts through your bots',
};

const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/** The values of a space-separated scope, `workspace` kept as itself, unknown ones dropped. */
function known(text: string | null | undefined): string[] {
  return (text ?? '').split(' ').filter((s) => s === ALL || isScope(s));
}

/** The scopes `text` names, `workspace` expanded, in SCOPES order (read not added). */
function named(text: string | null | undefined): Scope[] {
  const k = known(text);
  return SCOPES.filter((s) => k.includes(ALL) || k.includes(s));
}

/** The cap of a deployment: the option's scopes (`workspace` expanded, unknown ignored), read always; none given: all four. */
export function capOf(option: readonly string[] | undefined): readonly Scope[] {
  return option === undefined ? SCOPES : held(option.join(' '), SCOPES);
}

/** What a grant's (or token's) scope holds here: its scopes within `cap`, read always. */
export function held(text: string, cap: readonly Scope[]): Scope[] {
  const n = named(text);
  return SCOPES.filter((s) => s === READ || (n.includes(s) && cap.includes(s)));
}

/**
 * What an authorization request asks, as the form carries it: its known values (none, or only
 * unknown ones: as if it named none, everything), `workspace` kept as the request said it.
 */
export function asked(text: string | null): string {
  const k = known(text);
  return k.length === 0 ? ALL : [...new Set(k)].join(' ');
}

/** Scopes as an answer's `scope` says them: all four as `workspace` when the request said so, else each by name. */
export function scopeText(scopes: readonly Scope[], askedText: string): string {
  return scopes.length === SCOPES.length && known(askedText).includes(ALL) ? ALL : scopes.join(' ');
}

/** The scopes a request's scope names (`workspace` expanded), and whether it names something this server does not know. */
export function requested(text: string): { scopes: Scope[]; unknown: boolean } {
  const values = text.split(' ').filter(Boolean);
  return { scopes: named(text), unknown: values.some((s) => s !== ALL && !isScope(s)) };
}
