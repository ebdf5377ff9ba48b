/**
 * What every view shares: the host's theme and style variables applied to the page, a small
 * DOM builder, a tool result's body, and money in major units.
 */
import { toMinor as toMinorUnits } from '../src/api/currency.js';
import { Bridge, type HostContext, type ToolResult } from './bridge.js';

/** Follow the host: its light/dark theme and any style variables it gives. */
export function followTheme(bridge: Bridge): void {
  bridge.on('ui/notifications/host-context-changed', (ctx: HostContext) => {
    const root = document.documentElement;
    if (ctx.theme === 'light' || ctx.theme === 'dark') root.dataset.theme = ctx.theme;
    for (const [k, v] of Object.entries(ctx.styles?.variables ?? {})) if (k.startsWith('--') && v) root.style.setProperty(k, v);
  });
}

type Child = Node | string | number | null | undefined | false;

/** `h('td', {class: 'num'}, '12.00')`: an element with attributes (on* as listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, unknown> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener);
    else if (k === 'value') (el as HTMLInputElement).value = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

/** Replace the children of `#id`. */
export function show(id: string, ...children: Child[]): void {
  const el = document.getElementById(id)!;
  el.replaceChildren();
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
}

/** The JSON body of a tool result: structuredContent, else its first text. */
export function bodyOf(r: ToolResult): any {
  if (r.structuredContent) return r.structuredContent;
  const text = r.content?.find((c) => c.type === 'text')?.text;
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return { message: text };
  }
}

/** The message of a failed result (the API's JSON error shape). */
export function errorOf(r: ToolResult): string | undefined {
  if (!r.isError) return undefined;
  const b = bodyOf(r);
  return String(b.message ?? b.error ?? 'The call failed.');
}

/** The currencies whose minor units are not 2, from the server's own data set (put in by tools/build-views.mjs). */
declare const __CURRENCY_DIGITS__: Readonly<Record<string, number>>;

/** Digits after the point of a currency (ISO 4217, as the server counts them: IDR 2, JPY 0, BHD 3). */
export function digitsOf(currency: string): number {
  return __CURRENCY_DIGITS__[currency] ?? 2;
}

/** 1234 USD → "12.34 USD". */
export function money(minor: number, currency: string): string {
  const d = digitsOf(currency);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const whole = Math.floor(abs / 10 ** d);
  const frac = d ? '.' + String(abs % 10 ** d).padStart(d, '0') : '';
  return `${sign}${whole.toLocaleString('en').replace(/,/g, '\u202f')}${frac} ${currency}`;
}

/** "12.5" in USD → 1250; undefined when it is not an amount of that currency (src/api/currency.ts' conversion). */
export function toMinor(text: string, currency: string): number | undefined {
  return toMinorUnits(text, digitsOf(currency));
}

/** A new view: its bridge, following the host's theme and saying when the call was cancelled; `wire` adds the view's own listeners before it connects. */
export function startView(name: string, wire: (bridge: Bridge) => void): Bridge {
  const bridge = new Bridge();
  followTheme(bridge);
  bridge.on('ui/notifications/tool-cancelled', (p: { reason?: string }) =>
    show('status', `The tool call was cancelled${p.reason ? `: ${p.reason}` : ''}.`),
  );
  wire(bridge);
  bridge.connect(name).catch((e: Error) => show('status', `Could not connect to the host: ${e.message}`));
  return bridge;
}
