/**
 * A real OTLP/HTTP receiver for the telemetry tests, as a collector's `otlp` receiver listens:
 * POST /v1/traces and /v1/metrics on 127.0.0.1, in http/json or http/protobuf. Protobuf bodies
 * are decoded with the official OTLP definitions as OpenTelemetry's own package compiled them
 * (protobufjs code generated from opentelemetry-proto, shipped in @opentelemetry/otlp-transformer
 * 0.216, installed as `otlp-transformer-generated`). Every body is kept raw too, for the sweep
 * that looks for what must never be exported.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import generated from 'otlp-transformer-generated/build/src/generated/root.js';

const collector = (generated as any).opentelemetry.proto.collector;

/** An attribute's value as the test reads it: strings, numbers (ints too) and booleans. */
type Value = string | number | boolean;

export interface ReceivedSpan {
  name: string;
  /** OTLP's SpanKind: 1 INTERNAL, 2 SERVER, 3 CLIENT. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, Value>;
  /** 0 unset, 1 ok, 2 error. */
  status: number;
  /** The resource's attributes (service.name). */
  resource: Record<string, Value>;
}

interface ReceivedPoint {
  attributes: Record<string, Value>;
  /** A sum's value, or a histogram's count and sum. */
  value?: number;
  count?: number;
  sum?: number;
}

interface ReceivedMetric {
  name: string;
  unit: string;
  points: ReceivedPoint[];
}

export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

/** A bytes field as hex: base64 from protobuf's toObject, already hex in OTLP/JSON. */
function hex(v: unknown): string {
  if (typeof v !== 'string' || v === '') return '';
  return /^[0-9a-f]+$/.test(v) && (v.length === 32 || v.length === 16) ? v : Buffer.from(v, 'base64').toString('hex');
}

function valueOf(v: any): Value {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  return JSON.stringify(v);
}

function attributesOf(list: any[] | undefined): Record<string, Value> {
  return Object.fromEntries((list ?? []).map((a: any) => [a.key, valueOf(a.value ?? {})]));
}

export interface Receiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans(): ReceivedSpan[];
  metrics(): ReceivedMetric[];
  /** Every body received, decoded (protobuf: as protobufjs reads it) and raw, as text. */
  everything(): string;
  /** The content types the bodies came in. */
  contentTypes(): Set<string>;
  /** Bodies it could not read (answered 400). */
  errors(): string[];
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 on a free port. */
export async function startReceiver(): Promise<Receiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const bodies: string[] = [];
  const types = new Set<string>();
  const errors: string[] = [];

  const take = (path: string, type: string, raw: Buffer): void => {
    const json = type.startsWith('application/json');
    const proto = type.startsWith('application/x-protobuf');
    if (!json && !proto) throw new Error(`unexpected content type ${type}`);
    types.add(json ? 'json' : 'protobuf');
    const kind = path === '/v1/traces' ? collector.trace.v1.ExportTraceServiceRequest : collector.metrics.v1.ExportMetricsServiceRequest;
    const body: any = json
      ? JSON.parse(raw.toString('utf8'))
      : kind.toObject(kind.decode(raw), { longs: String, enums: Number, bytes: String, defaults: false });
    bodies.push(raw.toString(json ? 'utf8' : 'latin1'), JSON.stringify(body));
    if (path === '/v1/traces') {
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              name: s.name,
              kind: Number(s.kind ?? 0),
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              attributes: attributesOf(s.attributes),
              status: Number(s.status?.code ?? 0),
              resource: attributesOf(rs.resource?.attributes),
            });
    } else {
      for (const rm of body.resourceMetrics ?? [])
        for (const sm of rm.scopeMetrics ?? [])
          for (const m of sm.metrics ?? []) {
            const data = m.histogram ?? m.sum ?? m.gauge ?? {};
            metrics.push({
              name: m.name,
              unit: m.unit ?? '',
              points: (data.dataPoints ?? []).map((p: any) => ({
                attributes: attributesOf(p.attributes),
                ...(p.asInt !== undefined ? { value: Number(p.asInt) } : {}),
                ...(p.asDouble !== undefined ? { value: Number(p.asDouble) } : {}),
                ...(p.count !== undefined ? { count: Number(p.count) } : {}),
                ...(p.sum !== undefined ? { sum: Number(p.sum) } : {}),
              })),
            });
          }
    }
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      if (req.method !== 'POST' || (req.url !== '/v1/traces' && req.url !== '/v1/metrics')) {
        res.writeHead(404).end();
        return;
      }
      try {
        take(req.url, type, Buffer.concat(chunks));
      } catch (e) {
        errors.push(String(e));
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(e));
        return;
      }
      // An empty Export*ServiceResponse: full success.
      if (type.startsWith('application/json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    metrics: () => metrics,
    everything: () => bodies.join('\n'),
    contentTypes: () => types,
    errors: () => errors,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The OTEL_* variables that send both signals to `receiver` in `protocol`; metrics only when the process ends (the flush on exit is tested too). */
export function otelEnv(receiver: Receiver, protocol: 'http/json' | 'http/protobuf'): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: 'workspace-mcp-test',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    OTEL_METRIC_EXPORT_INTERVAL: '600000',
  };
}
