/**
 * The telemetry hook, a neutral module every layer may call (it imports nothing): the points
 * where the server does something an operator counts or times call these functions, which do
 * nothing until the CLI installs the OpenTelemetry side (src/cli/telemetry.ts, loaded only when
 * the standard `OTEL_*` variables ask for it). So a run without telemetry loads no
 * OpenTelemetry package and pays one check per call. Never handed a key, a token, a contact's
 * field or a message's text: what is passed here is methods, names, codes, counts and currencies.
 */

/** What a request's span is made of, read from the request as the SDK hands it to its handler. */
export interface RequestFacts {
  /** The JSON-RPC method (`tools/call`). */
  method: string;
  /** The request's params: `name` (a tool's, a prompt's) and `_meta` (`traceparent`, `tracestate`) are read. */
  params: Record<string, unknown> | undefined;
  id: string | number;
  /** The 2025-era session (Streamable HTTP), if any. */
  sessionId: string | undefined;
  /** Over HTTP: the request's headers (its `traceparent`); undefined over stdio. */
  headers: { get(name: string): string | null } | undefined;
  /** The protocol revision, read once the request is answered (initialize negotiates it). */
  protocolVersion(): string | undefined;
}

/** Why a request was refused before it did anything: a scope it lacks, a money cap, a rate. */
export type Refusal = 'scope' | 'cap' | 'rate';

/** What src/cli/telemetry.ts installs. */
export interface Telemetry {
  /** `run` (the request's handler) within the request's span; its duration recorded. */
  request<T>(facts: RequestFacts, run: () => Promise<T>): Promise<T>;
  /**
   * A request to `serve`'s API has come in whole: a SERVER span begins (its parent from the
   * `traceparent` header); the function returned ends it with the answer's status.
   */
  apiRequest(verb: string, method: string, headers: { traceparent?: string; tracestate?: string }): (status: number) => void;
  /** `run` (one API call into the built-in service) within a span of its own, under the request's. */
  backend<T>(method: string, system: 'sqlite' | 'postgresql', run: () => Promise<T>): Promise<T>;
  refused(reason: Refusal): void;
  /** A money move done: its direction, the account's currency and the amount in minor units (never who). */
  moved(direction: 'credit' | 'debit', currency: string, minor: number): void;
  /** A bulk plan's step ended (`done`, `failed`, `skipped`, `unknown`). */
  bulkStep(status: string): void;
  /** A session began (2025-era Streamable HTTP: `tcp`; stdio: `pipe`); the function returned ends it. */
  session(transport: 'pipe' | 'tcp'): () => void;
  /** Sends what is still buffered and stops. */
  flush(): Promise<void>;
}

let active: Telemetry | undefined;

/** Installs the OpenTelemetry side (src/cli/telemetry.ts), before any server is built. */
export function installTelemetry(t: Telemetry): void {
  active = t;
}

/** The installed telemetry, or undefined (telemetry off): a request handler is wrapped only when it is on. */
export function requestTelemetry(): Pick<Telemetry, 'request'> | undefined {
  return active;
}

/** A request to `serve`'s API began (`method`: as its path names it); what is returned ends its span with the answer's status. */
export function apiRequestStarted(
  verb: string,
  method: string,
  headers: { traceparent?: string; tracestate?: string },
): ((status: number) => void) | undefined {
  return active?.apiRequest(verb, method, headers);
}

/** `run`, an API call into the built-in service, within its span (telemetry on). */
export function traceBackend<T>(method: string, system: 'sqlite' | 'postgresql', run: () => Promise<T>): Promise<T> {
  return active ? active.backend(method, system, run) : run();
}

/** Counts a request refused by a scope, a money cap or a rate. */
export function countRefusal(reason: Refusal): void {
  active?.refused(reason);
}

/** Counts a money move done (direction, currency, minor units). */
export function countMoney(direction: 'credit' | 'debit', currency: unknown, minor: unknown): void {
  if (active && typeof currency === 'string' && typeof minor === 'number') active.moved(direction, currency, minor);
}

/** Counts a bulk plan's step by how it ended. */
export function countBulkStep(status: string): void {
  active?.bulkStep(status);
}

/** A session began; call what is returned when it ends. */
export function sessionStarted(transport: 'pipe' | 'tcp'): () => void {
  return active ? active.session(transport) : () => {};
}

/** Sends what is buffered (on exit: the drain's end, SIGTERM, stdin's end). */
export function flushTelemetry(): Promise<void> {
  return active ? active.flush() : Promise.resolve();
}
