/**
 * The consent page of OAuth sign-in: the person sees which application asks and where it will
 * be sent back to, what it asks to do (a box per scope, ticked as asked: the person may untick
 * any but read), pastes their Workspace API key, and allows or denies. Plain HTML with no
 * script, the MCP Apps views' palette (light and dark from the system), labelled fields, one
 * form posted to the same address. The key is never put back into the page.
 */
import { READ, SCOPE_WORDS, SCOPES, type Scope } from './scopes.js';

/** The authorization request's fields the form carries back (never the key). */
export type RequestFields = Record<string, string>;

export interface ConsentPage {
  clientName: string;
  /** This server's public host: whose sign-in page this is. */
  serverHost: string;
  /** A metadata document's host (where the name was read); none: a registration here, the name the application's own word. */
  documentHost?: string;
  /** Where the client will be sent back to: its redirect URI's host (or scheme, for an app's own). */
  returnsTo: string;
  fields: RequestFields;
  /** A box each: the scopes a grant here may hold. */
  offered: readonly Scope[];
  /** Those ticked to start with (what the application asked); the others are shown, not to be ticked. */
  asked: readonly Scope[];
  csrf: string;
  /** What went wrong with the last try, said plainly. */
  problem?: string;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
:root{color-scheme:light;--bg:#fff;--bg2:#f4f4f5;--text:#18181b;--text2:#52525b;--border:#d4d4d8;--accent:#2563eb;--accent-text:#fff;--danger:#b91c1c;--focus:#1d4ed8}
@media (prefers-color-scheme:dark){:root{color-scheme:dark;--bg:#18181b;--bg2:#27272a;--text:#f4f4f5;--text2:#a1a1aa;--border:#52525b;--accent:#60a5fa;--accent-text:#0b1220;--danger:#fca5a5;--focus:#93c5fd}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg2);color:var(--text);font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}
main{max-width:28rem;margin:8vh auto;padding:1.5rem;background:var(--bg);border:1px solid var(--border);border-radius:12px}
h1{font-size:1.25rem;margin:0 0 .75rem}
p{margin:.5rem 0;color:var(--text2)}
strong{color:var(--text)}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
fieldset{border:1px solid var(--border);border-radius:8px;margin:1rem 0 0;padding:.5rem .75rem .75rem}
legend{font-weight:600;padding:0 .25rem}
.scope{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;margin:.5rem 0 0}
.scope input{flex:none;margin:.3rem 0 0;width:1rem;height:1rem;accent-color:var(--accent)}
.scope input:disabled+span{color:var(--text2)}
input[type=password]{width:100%;padding:.6rem .7rem;font:inherit;color:var(--text);background:var(--bg);border:1px solid var(--border);border-radius:8px}
.hint{font-size:.875rem}
.problem{color:var(--danger);font-weight:600;margin-top:.25rem}
input[aria-invalid=true]{border:2px solid var(--danger)}
.server{font-size:.875rem;margin:0 0 1rem}
.actions{display:flex;gap:.75rem;margin-top:1.25rem}
button{font:inherit;font-weight:600;padding:.6rem 1rem;border-radius:8px;border:1px solid var(--border);background:var(--bg2);color:var(--text);cursor:pointer}
button.allow{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
`;

export function consentPage(p: ConsentPage): string {
  const hidden = Object.entries(p.fields)
    .map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="same-origin"><title>Sign in to your Workspace</title><style>${STYLE}</style></head>
<body><main>
<p class="server">Workspace sign-in at <strong>${escape(p.serverHost)}</strong></p>
<h1>Allow ${escape(p.clientName)} to use your Workspace?</h1>
<p class="hint">${p.documentHost ? `The application is described at <strong>${escape(p.documentHost)}</strong>.` : 'The application named itself; this server has not verified the name.'}</p>
<p><strong>${escape(p.clientName)}</strong> will act as you in your Workspace, as far as you allow below and within the money limits this server sets. After you allow it you go back to <strong>${escape(p.returnsTo)}</strong>.</p>
<form method="post" autocomplete="off">
${hidden}<input type="hidden" name="csrf" value="${escape(p.csrf)}">
${scopeBoxes(p.offered, p.asked)}
<label for="api_key">Your Workspace API key</label>
<input type="password" id="api_key" name="api_key" required autocomplete="off" spellcheck="false" aria-describedby="key-hint${p.problem ? ' problem' : ''}"${p.problem ? ' aria-invalid="true" autofocus' : ''}>
${p.problem ? `<p class="problem" id="problem" role="alert">${escape(p.problem)}</p>` : ''}
<p class="hint" id="key-hint">Find it in your profile, on the API tab. It is kept encrypted on this server and is never shown again; you can revoke this access at any time.</p>
<div class="actions"><button class="allow" type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny" formnovalidate>Deny</button></div>
</form>
</main></body></html>`;
}

/**
 * The boxes, one per scope offered: read ticked and required (a browser sends it, so a form sent
 * with no box at all is one filled without a browser; the server adds read whatever comes), the
 * others ticked as asked, those not asked shown but not to be ticked (the person may only narrow).
 */
function scopeBoxes(offered: readonly Scope[], asked: readonly Scope[]): string {
  const box = (s: Scope) => {
    const id = `scope-${s.split(':')[1]}`;
    const state = s === READ ? ' checked required' : asked.includes(s) ? ' checked' : ' disabled';
    const note = s !== READ && !asked.includes(s) ? ' (not asked for)' : '';
    return `<label class="scope" for="${id}"><input type="checkbox" id="${id}" name="scope" value="${s}"${state}><span>${escape(SCOPE_WORDS[s] + note)}</span></label>`;
  };
  return `<fieldset><legend>What it may do</legend>\n${SCOPES.filter((s) => offered.includes(s))
    .map(box)
    .join('\n')}\n</fieldset>`;
}

/** A page that says sign-in cannot go on, and why (an unknown client, a redirect URI it did not register). */
export function problemPage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escape(title)}</h1><p role="alert">${escape(message)}</p><p>Go back to the application and start again.</p></main></body></html>`;
}
