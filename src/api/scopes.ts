/**
 * What a person may let their assistant do: four scopes, and which one each method needs,
 * derived from its definition (never a table of names): a method that moves money needs
 * `workspace:money`; one that changes nothing (`readOnlyHint`) `workspace:read`; one that reaches
 * a person outside the workspace (`openWorldHint`: a message) `workspace:message`; any other
 * change `workspace:write`.
 */
import { isMoney, type MethodDef } from './define.js';

export const SCOPES = ['workspace:read', 'workspace:write', 'workspace:money', 'workspace:message'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scope a method needs, from its definition. */
export function scopeOf(def: MethodDef): Scope {
  if (isMoney(def)) return 'workspace:money';
  if (def.annotations.readOnlyHint) return 'workspace:read';
  if (def.annotations.openWorldHint) return 'workspace:message';
  return 'workspace:write';
}
