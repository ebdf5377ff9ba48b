#!/usr/bin/env node
/**
 * docs/api.md, the API reference, made from the method definitions (src/api): every method's
 * verbs and path, parameters (type, required, limits, notes), answer shape and errors, and the
 * error table. Nothing in it is written by hand but the short prose around the tables: change
 * a definition, run `npm run docs:api` (after `npm run build`), commit both.
 * test/repo/api-docs.test.ts renders it from src/api in memory and fails when the file differs.
 *
 *   npm run build && npm run docs:api          # writes docs/api.md
 *   node tools/api-docs.mjs --check            # exit 1 when docs/api.md is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';

/**
 * When each error of the table is answered. Every entry of ERRORS needs one (a new kind of
 * error fails the render until it is described here).
 */
const WHEN = {
  unauthorized: 'No key, or a key no owner has (`Authorization: Bearer <key>`).',
  pro_required: "The key's owner is on the Free plan: every method needs Pro.",
  forbidden: 'A bot, contact, account, list or record of another owner (or of a project the owner was only invited to).',
  owner_blocked: "The key's owner is blocked.",
  list_limit: 'The project holds as many lists as it may (createListSchema).',
  not_found: 'A bot, contact, account or variable that does not exist or was deleted.',
  schema_not_found: 'A list (`schema_id`) that does not exist or was deleted; `errors.schema_id` holds the text too.',
  not_found_on: 'A missing object named by one parameter (`bot_id` of createOrUpdateContact, `item_id` of records); `errors` names it.',
  route_not_found: 'A path that names no method.',
  method_not_allowed: 'A verb the method does not take (GET to a POST-only method); the `Allow` header lists the ones it does.',
  method_removed: 'A method past the switch-off date of its deprecation (`admin deprecate`).',
  payload_too_large: 'A body over 1 MiB.',
  validation:
    "Parameters that fail their rules: `errors` lists every failing field (dot paths, `fields.0.slug`) with Laravel's English messages; `message` is the first of them.",
  currency_exists: 'The contact already has an account in that currency.',
  account_not_empty: 'Deleting an account whose balance is not 0.',
  account_blocked: 'A debit of a blocked account.',
  insufficient_funds: 'A debit larger than the balance; nothing moves.',
  idempotency_conflict: 'MCP server only: an `idempotency_key` used again with other arguments.',
  confirmation_required: 'MCP server only: a money call over a cap that nobody could confirm; nothing moved.',
  confirmation_declined: 'MCP server only: the person declined the money call; nothing moved.',
  account_not_seen:
    "MCP server only, with money caps on: no answer (in this process or an earlier one for the same owner) showed which contact holds the account, so its currency and caps are unknown; nothing moved. Call getContactAccounts (or findContacts) for the account's contact, then call again.",
  too_many_attempts: 'Over the rate limit of the owner (120 requests a minute); `Retry-After` says when to try again.',
  bad_request: 'Malformed HTTP, refused before routing.',
  headers_too_large: 'Headers or URL too large, refused before routing.',
  server_error: 'A fault of the server. Never the answer to anything a client sends.',
  service_unavailable:
    'The database cannot be reached for now (a shared PostgreSQL database); nothing was changed; `Retry-After` says when to try again.',
  not_available: 'MCP server only: a feature the server was started without.',
  insufficient_scope:
    "MCP server only: a tool outside the scopes of the person's sign-in, the read-only address or the deployment's --scopes; nothing ran.",
  cancelled: 'Remote client only: the caller cancelled the call before an answer came.',
  outcome_unknown:
    'A write whose answer was lost midway (the remote client; on PostgreSQL a lost `COMMIT`, with status 503): it may have been made, so read it back before sending it again.',
  upstream_unreachable: 'Remote client only: the remote API could not be reached; the call was not carried out.',
  bad_upstream_response: 'Remote client only: the remote API answered with a body that is not JSON.',
};

/** The errors every method may answer, besides its own. */
const EVERY_METHOD = ['unauthorized', 'pro_required', 'owner_blocked', 'method_removed', 'too_many_attempts', 'service_unavailable'];

const SAFE = Number.MAX_SAFE_INTEGER;

/** A table cell: no line breaks, pipes escaped. */
function cell(text) {
  return String(text ?? '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|');
}

function code(text) {
  return `\`${text}\``;
}

function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join(
    '\n',
  );
}

/** How many (as "1-30", "at most 255", "at least 0"), in `unit`. */
function bounds(min, max, unit = '') {
  const u = unit ? ` ${unit}` : '';
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${min}${u}` : `${min} to ${max}${u}`;
  if (min !== undefined) return `at least ${min}${u}`;
  if (max !== undefined) return `at most ${max}${u}`;
  return '';
}

// ---------------------------------------------------------------------------------------
// Parameters: the rules of src/api/rules.ts, walked.

function ruleType(s) {
  if (s.oneOf) return `one of ${s.oneOf.map((v) => code(v)).join(', ')}`;
  switch (s.kind) {
    case 'string':
      return s.format ? `string (${s.format.replace('_', '-')})` : 'string';
    case 'array':
      return s.items ? `array of ${s.items.state.kind === 'object' ? 'objects' : ruleType(s.items.state)}` : 'array';
    case 'map':
      return 'object (free keys)';
    case 'any':
      return s.advertise ? `${s.advertise} (read leniently)` : 'any';
    default:
      return s.kind;
  }
}

function ruleRequired(s) {
  if (s.required) return 'yes';
  if (s.requiredWithout) return `without ${code(s.requiredWithout)}`;
  if (s.requiredIf) return `if ${code(s.requiredIf.other)} is ${s.requiredIf.values.map(code).join(' or ')}`;
  return 'no';
}

function ruleLimits(s) {
  const out = [];
  const unit = s.kind === 'string' ? 'characters' : s.kind === 'array' ? 'items' : '';
  const b = bounds(s.min, s.max, unit);
  if (b) out.push(b);
  if (s.pattern) out.push(`matches ${code(s.pattern.source)}`);
  if (s.check) out.push('checked by the service');
  if (s.excludeWith) out.push(`dropped when ${s.excludeWith.map(code).join(' or ')} is given`);
  if (s.ignored) out.push('accepted and ignored');
  return out.join('; ');
}

/** One row per parameter, nested ones under dot paths (`fields.*.slug`). */
function paramRows(shape, prefix = '') {
  const rows = [];
  for (const [name, rule] of Object.entries(shape)) {
    const s = rule.state;
    const path = prefix + name;
    rows.push([code(path), ruleType(s), ruleRequired(s), ruleLimits(s), s.description ?? '']);
    if (s.kind === 'object' && s.shape) rows.push(...paramRows(s.shape, `${path}.`));
    if (s.kind === 'array' && s.items) {
      const is = s.items.state;
      if (is.kind === 'object' && is.shape) rows.push(...paramRows(is.shape, `${path}.*.`));
      else if (is.required || is.min !== undefined || is.max !== undefined || is.pattern)
        rows.push([code(`${path}.*`), ruleType(is), ruleRequired(is), ruleLimits(is), is.description ?? '']);
    }
  }
  return rows;
}

/** Every description of a shape, nested ones too. */
function shapeTexts(shape) {
  const out = [];
  for (const rule of Object.values(shape)) {
    const s = rule.state;
    if (s.description) out.push(s.description);
    if (s.shape) out.push(...shapeTexts(s.shape));
    if (s.items?.state.shape) out.push(...shapeTexts(s.items.state.shape));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Answers: the result's zod schema as JSON Schema, walked into rows of path, type and note.

function makeWalker(defs) {
  const deref = (node) => (node && node.$ref ? defs[node.$ref.replace('#/$defs/', '')] : node);

  /** The node without its `null` alternative, and whether it had one. */
  function unNull(node) {
    if (Array.isArray(node.type) && node.type.includes('null')) {
      const rest = node.type.filter((t) => t !== 'null');
      return [{ ...node, type: rest.length === 1 ? rest[0] : rest }, true];
    }
    if (Array.isArray(node.anyOf) && node.anyOf.some((a) => a.type === 'null' && Object.keys(a).length === 1)) {
      const rest = node.anyOf.filter((a) => !(a.type === 'null' && Object.keys(a).length === 1));
      const { anyOf: _a, ...own } = node;
      return [
        rest.length === 1 ? { ...own, ...rest[0], description: node.description ?? rest[0].description } : { ...own, anyOf: rest },
        true,
      ];
    }
    return [node, false];
  }

  function short(raw) {
    const [node, nullable] = unNull(raw);
    let t;
    if (node.$ref) t = 'object';
    else if ('const' in node) t = code(JSON.stringify(node.const));
    else if (node.enum) t = node.enum.map((v) => code(JSON.stringify(v))).join(' or ');
    else if (node.anyOf) t = node.anyOf.map(short).join(' or ');
    else if (node.not && Object.keys(node.not).length === 0) t = 'nothing';
    else if (node.type === 'array') t = node.items?.not ? 'empty array `[]`' : `array of ${plural(short(node.items ?? {}))}`;
    else if (node.type === 'object')
      t = node.properties || !node.additionalProperties ? 'object' : `object (key → ${short(node.additionalProperties)})`;
    else if (node.type) t = node.type;
    else t = 'any';
    return nullable ? `${t} or \`null\`` : t;
  }

  function plural(t) {
    return /^(object|string|integer|number|boolean)$/.test(t) ? `${t}s` : t;
  }

  /** Rows under `path`; `seen` holds the $refs being walked, and where each was first shown. */
  function rows(raw, path, optional, out, seen) {
    const ref = raw.$ref ?? (Array.isArray(raw.anyOf) ? raw.anyOf.find((a) => a.$ref)?.$ref : undefined);
    const [node0] = unNull(raw);
    if (ref && seen.has(ref) && (node0.$ref || unNull(raw)[1])) {
      out.push([
        code(path),
        `${short(raw)}${optional ? ', may be absent' : ''}`,
        [raw.description, `the same shape as ${code(seen.get(ref))}`].filter(Boolean).join('; '),
      ]);
      return;
    }
    const node = node0.$ref ? { ...deref(node0), description: raw.description ?? deref(node0).description } : node0;
    const nextSeen = node0.$ref ? new Map([...seen, [node0.$ref, path]]) : seen;
    if (path) out.push([code(path), `${short(raw)}${optional ? ', may be absent' : ''}`, node.description ?? '']);
    const into = (n, p) => {
      const m = n.$ref ? { ...deref(n) } : n;
      const s = n.$ref ? new Map([...nextSeen, [n.$ref, p]]) : nextSeen;
      if (m.type === 'object' && m.properties) {
        const required = new Set(m.required ?? []);
        for (const [k, v] of Object.entries(m.properties)) rows(v, p ? `${p}.${k}` : k, !required.has(k), out, s);
        if (m.additionalProperties && Object.keys(m.additionalProperties).length === 0) out.push([code(`${p}.<other keys>`), 'any', '']);
      } else if (m.type === 'object' && m.additionalProperties && (m.additionalProperties.properties || m.additionalProperties.$ref)) {
        into(m.additionalProperties, `${p}.<key>`);
      } else if (m.type === 'array' && m.items && (m.items.properties || m.items.$ref)) {
        into(m.items, `${p}[]`);
      }
    };
    if (node.anyOf) for (const alt of node.anyOf) into(alt, path);
    else into(node, path);
  }
  return { rows, short };
}

function dedupe(rows) {
  const seen = new Set();
  return rows.filter((r) => {
    const k = JSON.stringify(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function answer(def) {
  if (def.result === null) return [`\`${def.status}\`, no body.`];
  const json = z.toJSONSchema(def.result, { io: 'output', unrepresentable: 'any' });
  const walker = makeWalker(json.$defs ?? {});
  const forms = Array.isArray(json.anyOf) && json.anyOf.every((a) => a.type === 'object') ? json.anyOf : [json];
  const out = [`\`${def.status}\`${forms.length > 1 ? `, in one of ${forms.length} forms` : ''}:`];
  forms.forEach((form, i) => {
    const rows = [];
    walker.rows(form, '', false, rows, new Map());
    if (forms.length > 1) out.push('', `Form ${i + 1}:`);
    out.push('', table(['Key', 'Type', 'Note'], dedupe(rows)));
  });
  return out;
}

// ---------------------------------------------------------------------------------------

function traits(def) {
  const a = def.annotations;
  const out = [a.readOnlyHint ? 'reads only' : 'changes data'];
  if (!a.readOnlyHint)
    out.push(
      a.destructiveHint ? 'destructive' : 'not destructive',
      a.idempotentHint ? 'idempotent' : 'not idempotent (each call acts again)',
    );
  if (def.money) out.push('moves money');
  if (a.openWorldHint) out.push('reaches outside the workspace');
  return out.join(', ');
}

function anchor(heading) {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const ERRORS_HEADING = 'Errors';

function errorsOf(def, errors) {
  const text = [def.description, ...shapeTexts(def.params)].join(' ');
  const named = Object.keys(errors).filter((name) => !EVERY_METHOD.includes(name) && new RegExp(`\\b${name}\\b`).test(text));
  const out = [];
  if (!def.verbs.includes('GET')) out.push(`\`405\` \`method_not_allowed\` to a GET`);
  if (Object.keys(def.params).length) out.push(`\`422\` \`validation\` on the parameters above`);
  for (const name of named) out.push(`\`${errors[name].status}\` \`${name}\``);
  const every = `[those of every method](#${anchor(ERRORS_HEADING)})`;
  return out.length ? `${out.join('; ')}; and ${every}.` : `only ${every}.`;
}

function method(def, errors, verbFor) {
  const lines = [`### ${def.name}`, '', `**${def.title}.** ${def.description}`, ''];
  const facts = [`${def.verbs.map(code).join(' or ')} \`/api/v1/${def.name}\` (clients here send ${code(verbFor(def))})`, traits(def)];
  if (def.aliases?.length) facts.push(`also answers as ${def.aliases.map((a) => code(a)).join(', ')}`);
  lines.push(facts.join('; ') + '.');
  const more = [];
  if (def.paging) {
    const p = def.paging;
    more.push(
      `Pages${p.size ? `: the page size is ${code(p.size)}` : ' of a fixed size'}${p.byOffset ? ', or by `offset` and `limit`' : ''}${p.whole ? `; every item at once: the MCP tool ${code(p.whole)}` : ''}.`,
    );
  }
  const check = def.checkWith;
  if (check) {
    const read = check.compare ? `${check.method.name} (compare ${check.compare})` : check.method.name;
    more.push(`An answer lost on the way: ${code(read)} tells whether it was carried out.`);
  }
  if (more.length) lines.push('', more.join(' '));
  lines.push('', '**Parameters**', '');
  if (Object.keys(def.params).length) {
    lines.push(table(['Name', 'Type', 'Required', 'Limits', 'Note'], paramRows(def.params)));
    const aliases = Object.entries(def.paramAliases ?? {});
    if (aliases.length) lines.push('', `Also accepted: ${aliases.map(([a, n]) => `${code(a)} for ${code(n)}`).join(', ')}.`);
  } else lines.push('None.');
  lines.push('', '**Answer**', '', ...answer(def), '', `**Errors**: ${errorsOf(def, errors)}`, '');
  return lines.join('\n');
}

/**
 * The whole of docs/api.md. `methods`, `errors` and `verbFor` are src/api's (catalog.ts'
 * METHODS, errors.ts' ERRORS, define.ts' verbFor), from the build or from the source.
 */
export function renderApiDocs({ methods, errors, verbFor }) {
  const missing = Object.keys(errors).filter((e) => !WHEN[e]);
  if (missing.length) throw new Error(`tools/api-docs.mjs: say when ${missing.join(', ')} is answered (WHEN)`);
  const out = [
    '# The Workspace API',
    '',
    '<!-- Generated by `npm run docs:api` (tools/api-docs.mjs) from the method definitions in src/api. Do not edit: change the definition and run it again. -->',
    '',
    `Every method of the API, ${methods.length} of them, as the built-in service answers it and the MCP server's tools of the`,
    'same names take it. Each is `/api/v1/<method>`, with the key as `Authorization: Bearer <key>` and',
    '`Accept: application/json`; a GET takes its parameters in the query string, a POST as a JSON body.',
    'Money is in minor units (cents for USD). How the service reads input, pages and rate-limits, and',
    'the choices it makes where the platform says nothing: [the HTTP service](http-service.md).',
    '',
    '| Method | Verbs | What it does |',
    '|---|---|---|',
    ...methods.map((m) => `| [${m.name}](#${anchor(m.name)}) | ${m.verbs.join(', ')} | ${cell(m.title)} |`),
    '',
    `## ${ERRORS_HEADING}`,
    '',
    'An error is answered with its status and a JSON body of the keys below (`message` and `error` hold',
    'the text, `code` the name, `errors` the failing fields: `{"amount": ["The amount field is required."]}`).',
    `Every method may answer ${EVERY_METHOD.map((e) => `\`${errors[e].status}\` \`${e}\``).join(', ')};`,
    'each method below names the others it answers. A method given the id of a bot, contact, account, list or',
    "record answers 404 for one that does not exist or was deleted, 403 for another owner's. The MCP server's",
    'tools answer the same, the status first.',
    '',
    table(
      ['Code', 'Status', 'Body keys', 'When'],
      Object.entries(errors).map(([name, e]) => [code(name), String(e.status), e.keys.map(code).join(', '), WHEN[name]]),
    ),
    '',
    '## Methods',
    '',
    ...methods.map((m) => method(m, errors, verbFor)),
  ];
  return (
    out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const API_DOCS = join(ROOT, 'docs', 'api.md');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { METHODS } = await import('../dist/api/catalog.js');
  const { ERRORS } = await import('../dist/api/errors.js');
  const { verbFor } = await import('../dist/api/define.js');
  const text = renderApiDocs({ methods: METHODS, errors: ERRORS, verbFor });
  if (process.argv.includes('--check')) {
    let now = '';
    try {
      now = readFileSync(API_DOCS, 'utf8');
    } catch {}
    if (now !== text) {
      process.stderr.write('docs/api.md is stale: npm run build && npm run docs:api\n');
      process.exit(1);
    }
  } else {
    writeFileSync(API_DOCS, text);
    process.stderr.write(`wrote docs/api.md (${METHODS.length} methods)\n`);
  }
}
