/**
 * The view's side of the MCP Apps messages: JSON-RPC 2.0 over postMessage with the host window
 * (ui/initialize, the tool's input and result, host context changes, and tools/call and
 * resources/read that the host forwards to this server). Written here rather than taken from
 * the ext-apps `App` class: that class brings zod and the client SDK, over 600 KB bundled,
 * and a view must stay small; the tests drive these views with the ext-apps `AppBridge`.
 */

/** The tool result shape the host forwards (CallToolResult). */
export interface ToolResult {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface HostContext {
  theme?: 'light' | 'dark';
  styles?: { variables?: Record<string, string | undefined> };
  toolInfo?: { tool?: { name?: string } };
  [key: string]: unknown;
}

type Listener = (params: any) => void;

/** The MCP Apps protocol revision these views speak. */
const PROTOCOL_VERSION = '2026-01-26';

export class Bridge {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  private readonly listeners = new Map<string, Listener[]>();
  context: HostContext = {};
  capabilities: Record<string, unknown> = {};

  constructor(private readonly host: Window = window.parent) {
    window.addEventListener('message', (e) => {
      // Only the host's messages: a view never talks to anyone else.
      if (e.source !== this.host) return;
      this.receive(e.data);
    });
  }

  /** Listen to a notification (`ui/notifications/tool-result`, ...). */
  on(method: string, fn: Listener): void {
    this.listeners.set(method, [...(this.listeners.get(method) ?? []), fn]);
  }

  private emit(method: string, params: unknown): void {
    for (const fn of this.listeners.get(method) ?? []) fn(params);
  }

  private send(message: Record<string, unknown>): void {
    this.host.postMessage({ jsonrpc: '2.0', ...message }, '*');
  }

  private receive(m: any): void {
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.id !== undefined && m.method === undefined) {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error.message ?? 'request failed'));
      else p.resolve(m.result);
      return;
    }
    if (m.id !== undefined) {
      // The host's requests: teardown and ping need only an answer.
      if (m.method === 'ui/resource-teardown' || m.method === 'ping') this.send({ id: m.id, result: {} });
      else this.send({ id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
      return;
    }
    if (m.method === 'ui/notifications/host-context-changed') this.context = { ...this.context, ...m.params };
    this.emit(m.method, m.params ?? {});
  }

  request<T = any>(method: string, params: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ id, method, params });
    });
  }

  notify(method: string, params: unknown = {}): void {
    this.send({ method, params });
  }

  /** The handshake: initialize, take the host's context, say initialized. */
  async connect(name: string): Promise<void> {
    const r = await this.request<{ hostContext?: HostContext; hostCapabilities?: Record<string, unknown> }>('ui/initialize', {
      appInfo: { name, version: '0.1.0' },
      appCapabilities: {},
      protocolVersion: PROTOCOL_VERSION,
    });
    this.context = r.hostContext ?? {};
    this.capabilities = r.hostCapabilities ?? {};
    this.emit('ui/notifications/host-context-changed', this.context);
    this.notify('ui/notifications/initialized');
    // The host sizes the frame to the page: the content's own height (scrollHeight would be at
    // least the frame's, so a frame could grow but never shrink back).
    const size = () => {
      const box = document.documentElement.getBoundingClientRect();
      this.notify('ui/notifications/size-changed', { width: Math.ceil(box.width), height: Math.ceil(box.height) });
    };
    new ResizeObserver(size).observe(document.documentElement);
  }

  /** tools/call through the host. */
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return this.request<ToolResult>('tools/call', { name, arguments: args });
  }

  /** resources/read through the host; undefined when the host does not forward reads. */
  async readJson(uri: string): Promise<unknown> {
    if (!this.capabilities.serverResources) return undefined;
    const r = await this.request<{ contents?: Array<{ text?: string }> }>('resources/read', { uri });
    const text = r.contents?.[0]?.text;
    return text === undefined ? undefined : JSON.parse(text);
  }
}
