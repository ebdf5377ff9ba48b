/**
 * Telemetry by OpenTelemetry's conventions, configured by the standard `OTEL_*` variables alone
 * and loaded only when they ask for it (main.ts imports this module then, and only then): traces
 * and metrics over OTLP (http/protobuf, the spec's default, or http/json), installed into the
 * neutral hook of src/common/telemetry.ts that the server's parts call.
 *
 * - A span per MCP request, kind SERVER, named `{mcp.method.name} {target}` (`tools/call
 *   getContacts`), with the MCP semantic conventions' attributes; its parent from the request's
 *   `params._meta.traceparent` / `tracestate`, or else the HTTP request's `traceparent` header.
 * - Under it, a span per backend call: the remote API's HTTP requests (undici's
 *   instrumentation, their URLs without a query), or a CLIENT span per call into the built-in
 *   service, named for the API method, with `db.system.name`.
 * - Metrics: `mcp.server.operation.duration` and `mcp.server.session.duration` (s), requests
 *   refused (by scope, cap or rate), money moved per currency and direction (moves and minor
 *   units), bulk steps by outcome.
 *
 * What is recorded is methods, tool names, codes, counts and currencies: never a key, a token,
 * a contact's field, an argument's value or a message's text.
 */
import {
  context,
  diag,
  DiagLogLevel,
  metrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { getNumberFromEnv, getStringFromEnv, getStringListFromEnv, W3CTraceContextPropagator } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider, type Span as SdkSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { installTelemetry, type RequestFacts, type Telemetry } from '../common/telemetry.js';
import { log } from '../common/log.js';

const SCOPE = 'workspace-mcp';

/** Seconds of an MCP operation, as the MCP semantic conventions advise its histogram's buckets. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** A tool's or prompt's name as an attribute: a name of the server's kind, else `_OTHER` (a client may send anything). */
function nameOf(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  return typeof v === 'string' && /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(v) ? v : '_OTHER';
}

/**
 * A tool result's error type: the API's error `code` in its first text (`insufficient_scope`),
 * else its HTTP status (`404`: the API's wire shape names no code there), else `tool_error`.
 */
function toolErrorType(result: { content?: unknown }): string {
  const first = Array.isArray(result.content) ? (result.content[0] as { type?: unknown; text?: unknown } | undefined) : undefined;
  if (first?.type === 'text' && typeof first.text === 'string') {
    try {
      const { code, status } = JSON.parse(first.text) as { code?: unknown; status?: unknown };
      if (typeof code === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(code)) return code;
      if (typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 600) return String(status);
    } catch {
      // Not the API's shape: the convention's value.
    }
  }
  return 'tool_error';
}

/** The JSON-RPC error code of what a handler threw (the SDK answers -32603 to anything else). */
function rpcCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'number' && Number.isInteger(code) ? String(code) : '-32603';
}

/** A URL as recorded: no user info, no query, no fragment (a search's words would be a person's data). */
function bareUrl(v: string): string {
  try {
    const u = new URL(v);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return v.replace(/[?#].*$/, '');
  }
}

/** A diagnostic's first line (the SDK may hand an error as JSON with its stack). */
function firstLine(message: unknown): string {
  let text = String(message);
  try {
    const e = JSON.parse(text) as { message?: unknown; stack?: unknown };
    text = String(e.message ?? e.stack ?? text);
  } catch {
    // Plain text already.
  }
  return text.split('\n')[0]!.slice(0, 500);
}

/** Before a span is exported: URLs without their query (undici's `url.full`, `url.query`), whatever made the span. */
class BareUrls implements SpanProcessor {
  onStart(): void {}
  onEnding(span: SdkSpan): void {
    const attrs = span.attributes as Record<string, unknown>;
    for (const name of ['url.full', 'http.url']) {
      const v = attrs[name];
      if (typeof v === 'string') attrs[name] = bareUrl(v);
    }
    for (const name of ['url.query', 'http.target']) delete attrs[name];
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The exporters a signal's variable names (`OTEL_TRACES_EXPORTER=otlp`, the default; `none`: off). */
function wanted(signal: 'TRACES' | 'METRICS'): boolean {
  const list = getStringListFromEnv(`OTEL_${signal}_EXPORTER`) ?? ['otlp'];
  for (const name of list)
    if (name !== 'otlp' && name !== 'none') log.warn({ signal, exporter: name }, 'telemetry: only the otlp exporter is offered');
  return list.includes('otlp');
}

/** The OTLP protocol of a signal: `http/protobuf` (the spec's default) or `http/json`. */
function protocolOf(signal: 'TRACES' | 'METRICS'): 'http/protobuf' | 'http/json' {
  const p = getStringFromEnv(`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`) ?? getStringFromEnv('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (p === 'http/json' || p === 'http/protobuf') return p;
  log.warn({ signal, protocol: p }, 'telemetry: only http/protobuf and http/json are offered; sending http/protobuf');
  return 'http/protobuf';
}

async function spanExporter(): Promise<SpanExporter> {
  // Each exporter reads the endpoint, headers, timeout and compression variables itself.
  if (protocolOf('TRACES') === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

async function metricExporter(): Promise<PushMetricExporter> {
  if (protocolOf('METRICS') === 'http/json') return new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter();
  return new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter();
}

/**
 * Starts the SDK as the variables say and installs it into the hook. `version`: the package's,
 * as `service.version` (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the defaults);
 * `remote`: the backend is a remote API (`--remote`), whose requests undici's instrumentation
 * traces (loaded only then: the built-in service makes no HTTP request); `api`: this is `serve`,
 * whose routes are named by the API's catalog (loaded only then: the stdio server loads it after
 * its first answer).
 */
export async function startTelemetry(version: string, { remote, api }: { remote: boolean; api: boolean }): Promise<void> {
  const findMethod = api ? (await import('../api/catalog.js')).findMethod : () => undefined;
  const resource = resourceFromAttributes({ 'service.name': SCOPE, 'service.version': version }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const traces = wanted('TRACES');
  const withMetrics = wanted('METRICS');
  const [exporter, metricsOut] = await Promise.all([traces ? spanExporter() : undefined, withMetrics ? metricExporter() : undefined]);

  // The SDK's own warnings (a collector that cannot be reached) on stderr, as the server's: their text only.
  const warn = (message: string) => log.warn({ detail: firstLine(message) }, 'telemetry');
  const quiet = () => {};
  diag.setLogger({ error: warn, warn, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const w3c = new W3CTraceContextPropagator();
  propagation.setGlobalPropagator(w3c);
  const tracerProvider = exporter
    ? new TracerProvider({ resource, spanProcessors: [new BareUrls(), new BatchSpanProcessor({ exporter })] })
    : undefined;
  if (tracerProvider) trace.setGlobalTracerProvider(tracerProvider);
  // An export may take at most the interval (the reader refuses a longer timeout).
  const interval = getNumberFromEnv('OTEL_METRIC_EXPORT_INTERVAL') ?? 60_000;
  const meterProvider = metricsOut
    ? new MeterProvider({
        resource,
        readers: [
          new PeriodicExportingMetricReader({
            exporter: metricsOut,
            exportIntervalMillis: interval,
            exportTimeoutMillis: Math.min(getNumberFromEnv('OTEL_METRIC_EXPORT_TIMEOUT') ?? 30_000, interval),
          }),
        ],
      })
    : undefined;
  if (meterProvider) metrics.setGlobalMeterProvider(meterProvider);
  if (tracerProvider && remote) {
    // The remote API's requests: undici publishes them on diagnostics channels, which this reads.
    const { UndiciInstrumentation } = await import('@opentelemetry/instrumentation-undici');
    new UndiciInstrumentation().enable();
  }

  const tracer = trace.getTracer(SCOPE, version);
  const meter = metrics.getMeter(SCOPE, version);
  const operation = meter.createHistogram('mcp.server.operation.duration', {
    description: 'MCP request duration as observed on the server, from its receipt until its result is ready.',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const sessionDuration = meter.createHistogram('mcp.server.session.duration', {
    description: 'The duration of an MCP session as observed on the server.',
    unit: 's',
    advice: { explicitBucketBoundaries: [...DURATION_BUCKETS, 600, 1800, 3600, 14400, 86400] },
  });
  const refusals = meter.createCounter('workspace_mcp.requests.refused', {
    description: 'Requests refused before they did anything: a scope the caller lacks, a money cap, a per-person rate.',
    unit: '{request}',
  });
  const moves = meter.createCounter('workspace_mcp.money.moves', {
    description: 'Money moves done, per currency and direction.',
    unit: '{move}',
  });
  const moved = meter.createCounter('workspace_mcp.money.amount', {
    description: 'Money moved, in minor units of the currency (cents for USD), per currency and direction.',
    unit: '{minor_unit}',
  });
  const apiDuration = meter.createHistogram('http.server.request.duration', {
    description: "Duration of the API's HTTP requests (serve).",
    unit: 's',
    advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] },
  });
  const bulkSteps = meter.createCounter('workspace_mcp.bulk.steps', { description: 'Bulk plan steps ended, by outcome.', unit: '{step}' });

  /** The remote parent a W3C trace context names (none: a root span). */
  const remoteParent = (traceparent: unknown, tracestate: unknown): Context => {
    if (typeof traceparent !== 'string' || traceparent === '') return ROOT_CONTEXT;
    const carrier: Record<string, string> = { traceparent };
    if (typeof tracestate === 'string' && tracestate !== '') carrier.tracestate = tracestate;
    return w3c.extract(ROOT_CONTEXT, carrier, { get: (c, k) => c[k], keys: (c) => Object.keys(c) });
  };
  /** The remote parent of a request: its `_meta`'s trace context (MCP's own), else its HTTP request's. */
  const parentOf = (facts: RequestFacts): Context => {
    const meta = facts.params?._meta as Record<string, unknown> | undefined;
    if (meta && typeof meta.traceparent === 'string') return remoteParent(meta.traceparent, meta.tracestate);
    return remoteParent(facts.headers?.get('traceparent'), facts.headers?.get('tracestate'));
  };

  const t: Telemetry = {
    async request(facts, run) {
      const start = performance.now();
      const { method } = facts;
      const target =
        method === 'tools/call' ? nameOf(facts.params?.name) : method === 'prompts/get' ? nameOf(facts.params?.name) : undefined;
      const http = facts.headers !== undefined;
      const attrs: Attributes = {
        'mcp.method.name': method,
        'network.transport': http ? 'tcp' : 'pipe',
        ...(http ? { 'network.protocol.name': 'http' } : {}),
      };
      if (method === 'tools/call') {
        attrs['gen_ai.tool.name'] = target;
        attrs['gen_ai.operation.name'] = 'execute_tool';
      }
      if (method === 'prompts/get') attrs['gen_ai.prompt.name'] = target;
      const span: Span = tracer.startSpan(
        target ? `${method} ${target}` : method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            ...attrs,
            'jsonrpc.request.id': String(facts.id),
            ...(facts.sessionId ? { 'mcp.session.id': facts.sessionId } : {}),
          },
        },
        parentOf(facts),
      );
      const end = (errorType: string | undefined, rpc?: string) => {
        const version = facts.protocolVersion();
        if (version) attrs['mcp.protocol.version'] = version;
        if (errorType !== undefined) {
          attrs['error.type'] = errorType;
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.setAttributes({ ...attrs, ...(rpc !== undefined ? { 'rpc.response.status_code': rpc } : {}) });
        span.end();
        operation.record((performance.now() - start) / 1000, attrs);
      };
      let result: Awaited<ReturnType<typeof run>>;
      try {
        result = await context.with(trace.setSpan(context.active(), span), run);
      } catch (e) {
        const code = rpcCode(e);
        end(code, code);
        throw e;
      }
      const r = result as { isError?: unknown; content?: unknown } | undefined;
      end(method === 'tools/call' && r?.isError === true ? toolErrorType(r) : undefined);
      return result;
    },
    apiRequest(verb, method, headers) {
      const start = performance.now();
      // A method of the API as the route (a fixed set); any other path is not named.
      const route = findMethod(method) ? `/api/v1/${method}` : undefined;
      const attrs: Attributes = {
        'http.request.method': verb,
        ...(route ? { 'http.route': route } : {}),
        'url.scheme': 'http',
        'network.protocol.name': 'http',
      };
      const span = tracer.startSpan(
        route ? `${verb} ${route}` : verb,
        { kind: SpanKind.SERVER, attributes: { ...attrs, ...(route ? { 'url.path': route } : {}) } },
        remoteParent(headers.traceparent, headers.tracestate),
      );
      return (status) => {
        attrs['http.response.status_code'] = status;
        // A server's span is an error for a 5xx only (HTTP semantic conventions).
        if (status >= 500) {
          attrs['error.type'] = String(status);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.setAttributes(attrs);
        span.end();
        apiDuration.record((performance.now() - start) / 1000, attrs);
      };
    },
    backend(method, system, run) {
      return tracer.startActiveSpan(
        method,
        { kind: SpanKind.CLIENT, attributes: { 'db.system.name': system, 'db.operation.name': method } },
        async (span) => {
          try {
            return await run();
          } catch (e) {
            span.setAttribute('error.type', e instanceof Error ? e.name : '_OTHER');
            span.setStatus({ code: SpanStatusCode.ERROR });
            throw e;
          } finally {
            span.end();
          }
        },
      );
    },
    refused(reason) {
      refusals.add(1, { reason });
    },
    moved(direction, currency, minor) {
      // An ISO 4217 code, never anything a caller wrote.
      const code = /^[A-Z]{3}$/.test(currency) ? currency : '_OTHER';
      moves.add(1, { currency: code, direction });
      if (Number.isFinite(minor) && minor > 0) moved.add(minor, { currency: code, direction });
    },
    bulkStep(status) {
      bulkSteps.add(1, { status });
    },
    session(transport) {
      const start = performance.now();
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        sessionDuration.record((performance.now() - start) / 1000, {
          'network.transport': transport,
          ...(transport === 'tcp' ? { 'network.protocol.name': 'http' } : {}),
        });
      };
    },
    async flush() {
      await Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
    },
  };
  installTelemetry(t);
}
