/**
 * The test host's page script (bundled by esbuild when the browser tests start): what a chat
 * host does with an MCP Apps view, through the ext-apps AppBridge. It puts the view's HTML in
 * a sandboxed frame (scripts only, an opaque origin), answers its ui/initialize with a host
 * context (theme, the tool), sends it the tool's input and result, sizes the frame to it, and
 * forwards its tools/call and resources/read to the MCP client, which lives in the test
 * (window.mcpRequest, exposed by puppeteer) and speaks to the real server.
 */
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

export interface Mount {
  html: string;
  tool: { name: string; inputSchema: { type: 'object' }; [k: string]: unknown };
  args: Record<string, unknown>;
  result: Record<string, unknown>;
  theme: 'light' | 'dark';
  width: number;
}

declare global {
  interface Window {
    mcpRequest(method: string, params: unknown): Promise<any>;
    mountView(m: Mount): Promise<void>;
    setTheme(theme: 'light' | 'dark'): Promise<void>;
  }
}

let bridge: AppBridge | undefined;

window.mountView = async (m) => {
  if (bridge) await bridge.close();
  document.body.dataset.theme = m.theme;
  const frame = document.createElement('iframe');
  frame.id = 'view';
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.style.width = `${m.width}px`;
  document.getElementById('host')!.replaceChildren(frame);
  const b = new AppBridge(
    null,
    { name: 'workspace-mcp test host', version: '1.0.0' },
    { serverTools: {}, serverResources: {} },
    { hostContext: { theme: m.theme, toolInfo: { tool: m.tool }, displayMode: 'inline', platform: 'web', locale: 'en-GB' } },
  );
  bridge = b;
  b.oncalltool = (params) => window.mcpRequest('tools/call', params);
  b.onreadresource = (params) => window.mcpRequest('resources/read', params);
  b.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
  };
  const ready = new Promise<void>((resolve) => {
    b.oninitialized = () => resolve();
  });
  await b.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  frame.srcdoc = m.html;
  await ready;
  await b.sendToolInput({ arguments: m.args });
  await b.sendToolResult(m.result as never);
};

window.setTheme = async (theme) => {
  document.body.dataset.theme = theme;
  await bridge!.sendHostContextChange({ theme });
};
