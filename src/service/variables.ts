/** Handlers: contact variables. Values show as in the contact view (media as short links). */
import { fail } from '../api/errors.js';
import type { Infer } from '../api/rules.js';
import type { deleteContactVariable, getContactVariables, setContactVariable, Variable } from '../api/variables.js';
import { HTTP_URL } from '../api/messages.js';
import { requireContact } from './access.js';
import { viewVariable } from './contacts.js';
import type { Ctx } from './context.js';
import { isMediaVariable } from './short-links.js';
import type { VariableRow } from '../store/contacts.js';

function view(ctx: Ctx, v: VariableRow): Variable {
  const { id, name, value, deletable } = viewVariable(v, ctx.secrets.signingKey);
  return { id, name, value, deletable };
}

export const variableHandlers = {
  getContactVariables(ctx: Ctx, p: Infer<(typeof getContactVariables)['params']>) {
    requireContact(ctx, p.contact_id);
    return { data: ctx.store.variables.list(p.contact_id).map((v) => view(ctx, v)) };
  },

  setContactVariable(ctx: Ctx, p: Infer<(typeof setContactVariable)['params']>) {
    requireContact(ctx, p.contact_id);
    return ctx.store.tx(() => {
      const old = ctx.store.variables.byName(p.contact_id, p.name);
      // A media variable keeps its type, so its value must stay a file URL.
      if (old && isMediaVariable({ type: old.type, value: '' }) && !HTTP_URL.test(p.value))
        throw fail.invalid('value', 'The value field must be a valid URL for a media variable.');
      return { data: view(ctx, ctx.store.variables.set(p.contact_id, p.name, p.value, p.deletable ?? false)) };
    });
  },

  deleteContactVariable(ctx: Ctx, p: Infer<(typeof deleteContactVariable)['params']>): void {
    requireContact(ctx, p.contact_id);
    const key = p.id !== undefined ? 'id' : 'name';
    const v = p.id !== undefined ? ctx.store.variables.byId(p.id) : ctx.store.variables.byName(p.contact_id, p.name!);
    if (!v || v.contact_id !== p.contact_id) throw fail.notFoundOn(key, 'Variable not found.');
    ctx.store.variables.delete(v.id);
  },
};
