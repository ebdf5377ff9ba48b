/** The MCP Registry's description of the server (server.json) names this package as it is published. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { name: string; version: string; mcpName: string };
const server = JSON.parse(readFileSync(new URL('server.json', root), 'utf8')) as {
  name: string;
  version: string;
  packages: Array<{ registryType: string; identifier: string; version: string; transport: { type: string } }>;
  remotes: Array<{ type: string; url: string; variables?: Record<string, unknown> }>;
};

describe('server.json', () => {
  it('names the npm package, its version and its mcpName (the registry checks they agree)', () => {
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(server.packages).toEqual([
      expect.objectContaining({ registryType: 'npm', identifier: pkg.name, version: pkg.version, transport: { type: 'stdio' } }),
    ]);
  });

  it('describes the hosted endpoint: Streamable HTTP at /mcp of a host each team fills in', () => {
    expect(server.remotes).toHaveLength(1);
    const [remote] = server.remotes;
    expect(remote!.type).toBe('streamable-http');
    expect(remote!.url).toBe('https://{host}/mcp');
    expect(Object.keys(remote!.variables ?? {})).toEqual(['host']);
  });
});
