/**
 * The JIT of a server that is up: V8 optimises a function once it has run a budget of its
 * bytecode (`--interrupt-budget`, 66 KiB by default in Node 20's V8 11, a figure chosen for short
 * scripts and pages). A tool call or an API request runs a few hundred small functions once each,
 * so at the default a server answers its first thousands of calls, and any call path it has not
 * taken for a while, in the interpreter and the baseline compiler: a stdio getMe cost twice its
 * optimised CPU in the short blocks of docs/BENCHMARKS.md. Once start-up is over (its code runs
 * once, and optimising it would only slow the start), the budget is cut to 8 KiB: the call paths
 * are optimised within their first hundred calls. The flag is a number the tiering heuristics
 * read (Node starts V8 so that flags may be set later); what code computes does not change, and
 * code already optimised stays as it is.
 *
 * Only on V8 11 (Node 20), where it was measured: later V8s have a mid tier (Maglev) that
 * optimises sooner on its own, with other budgets. `WORKSPACE_JIT=default` leaves V8 as it is.
 */
import { setFlagsFromString } from 'node:v8';
import { log } from '../common/log.js';

/** V8's budget (bytes of bytecode run) before a function is optimised, once the server is up. */
const SERVING_INTERRUPT_BUDGET = 8 * 1024;

let serving = false;

/**
 * Called once the server has started (its first answer written, or listening): every later call
 * is the server's work. Whether it changed V8's budget (false: already done, another V8, or
 * switched off).
 */
export function tierUpSooner(): boolean {
  if (serving) return false;
  serving = true;
  if (process.env.WORKSPACE_JIT === 'default' || !process.versions.v8.startsWith('11.')) return false;
  setFlagsFromString(`--interrupt-budget=${SERVING_INTERRUPT_BUDGET}`);
  log.debug({ interrupt_budget: SERVING_INTERRUPT_BUDGET }, 'serving: V8 optimises call paths sooner');
  return true;
}
