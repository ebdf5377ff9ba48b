/**
 * What one request may reach, as scopes (src/api/scopes.ts): those of the person's grant under
 * `--auth oauth` (every scope in the other modes), within the deployment's `--scopes`, and only
 * `workspace:read` through the read-only door. A tool whose scopes are all outside is neither
 * listed nor run: calling it is refused with what it needs and how to get it.
 */
import { SCOPES, type Scope } from '../../api/scopes.js';
import type { ToolReach, ToolSpec } from '../tool-spec.js';

/** The door a request came through: `/mcp`, or `/mcp/read-only`. */
export type Door = 'full' | 'read-only';

/** What a request may reach (why: said for the model and the person), and a key naming it (the same key: the same tools and refusals). */
export interface Reach extends ToolReach {
  key: string;
}

/** Whether `s` is one of the four scopes. */
const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/** The scopes a grant holds: `workspace` (a grant made before scopes) is all four; read is always held. */
export function grantedScopes(granted: readonly string[]): Scope[] {
  if (granted.includes('workspace')) return [...SCOPES];
  return SCOPES.filter((s) => s === 'workspace:read' || granted.includes(s));
}

/**
 * The reach of a request through `door`, on a deployment capped at `cap`, with the scopes its
 * sign-in granted (`granted`; undefined: no sign-in, every scope).
 */
export function reachOf(door: Door, cap: readonly Scope[], granted?: readonly string[]): Reach {
  const byDoor: readonly Scope[] = door === 'read-only' ? ['workspace:read'] : SCOPES;
  const signed = granted?.filter(isScope);
  const scopes = new Set(SCOPES.filter((s) => cap.includes(s) && byDoor.includes(s) && (!signed || signed.includes(s))));
  return {
    key: `${door} ${[...scopes].join(' ')}`,
    scopes,
    why(needs) {
      const what = `It needs ${needs.join(' or ')}`;
      if (!needs.some((s) => cap.includes(s))) return `${what}, which this deployment does not allow (its --scopes): ask whoever runs it.`;
      if (!needs.some((s) => byDoor.includes(s)))
        return `${what}: this is the server's read-only address (/mcp/read-only). The person adds the server at /mcp to let you change things.`;
      return `${what}, which the person did not grant when they signed in: ask them to sign in again and tick ${needs.length > 1 ? 'one of those boxes' : 'that box'} on the consent page.`;
    },
  };
}

/** The tools `reach` serves, and those it withholds with why. */
export function narrow(tools: readonly ToolSpec[], reach: Reach): { served: ToolSpec[]; withheld: Map<string, string> } {
  const served: ToolSpec[] = [];
  const withheld = new Map<string, string>();
  for (const t of tools) {
    if (t.scopes.some((s) => reach.scopes.has(s))) served.push(t);
    else withheld.set(t.name, `${t.name} was not run. ${reach.why(t.scopes)}`);
  }
  return { served, withheld };
}
