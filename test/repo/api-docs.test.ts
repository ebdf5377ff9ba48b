/**
 * docs/api.md is made from the method definitions (tools/api-docs.mjs, `npm run docs:api`), never
 * written by hand: rendered here from src/api in memory, it must be the committed file byte for
 * byte, and it must hold what a reader looks for in it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_DOCS, renderApiDocs } from '../../tools/api-docs.mjs';
import { METHODS } from '../../src/api/catalog.js';
import type { MethodDef } from '../../src/api/define.js';
import { verbFor } from '../../src/api/define.js';
import { ERRORS } from '../../src/api/errors.js';

const methods = METHODS as readonly MethodDef[];
const render = () => renderApiDocs({ methods, errors: ERRORS, verbFor });

describe('docs/api.md', () => {
  it('is what the definitions in src/api make of it (else: npm run build && npm run docs:api)', () => {
    expect(readFileSync(API_DOCS, 'utf8')).toBe(render());
  });

  it('follows a change of a definition: a changed limit, description or answer changes the document', () => {
    const before = render();
    const def = methods.find((m) => m.name === 'addFundsToContactAccount')!;
    const amount = def.params.amount!;
    const changed = { ...def, params: { ...def.params, amount: amount.max(5000) }, description: `${def.description} Planted.` };
    const after = renderApiDocs({ methods: methods.map((m) => (m === def ? changed : m)), errors: ERRORS, verbFor });
    expect(after).not.toBe(before);
    expect(after).toContain('| `amount` | integer | yes | 1 to 5000 |');
    expect(after).toContain('Each call adds again. Planted.');
  });

  it('has every method with its path, every parameter, its answer and its errors; and every error of the table', () => {
    const text = render();
    const sectionOf = (name: string) => {
      const start = text.indexOf(`\n### ${name}\n`);
      expect(start, name).toBeGreaterThan(0);
      const end = text.indexOf('\n### ', start + 1);
      return text.slice(start, end === -1 ? undefined : end);
    };
    for (const m of methods) {
      const section = sectionOf(m.name);
      expect(section, m.name).toContain(`\`/api/v1/${m.name}\``);
      for (const p of Object.keys(m.params)) expect(section, `${m.name} ${p}`).toContain(`| \`${p}\` |`);
      expect(section, m.name).toContain(`**Answer**\n\n\`${m.status}\``);
      expect(section, m.name).toContain('**Errors**');
      if (!m.verbs.includes('GET')) expect(section, m.name).toContain('`405` `method_not_allowed`');
    }
    for (const [name, e] of Object.entries(ERRORS)) expect(text).toContain(`| \`${name}\` | ${e.status} |`);
    // A coded refusal its definition names is listed with the method.
    expect(sectionOf('withdrawFundsFromContactAccount')).toContain('`422` `insufficient_funds`');
    expect(sectionOf('addContactAccount')).toContain('`422` `currency_exists`');
  });

  it('refuses to render an error the table has but the document does not explain', () => {
    const errors = { ...ERRORS, planted_error: { status: 418, keys: ['message'] } } as unknown as typeof ERRORS;
    expect(() => renderApiDocs({ methods, errors, verbFor })).toThrow(/planted_error/);
  });
});
