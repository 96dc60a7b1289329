// The local agents' HTTPS endpoints as the spaces' own tools reach them. Each agent's serving
// certificate comes from the CA of the space it delegates to (component-certs.ts), so that CA is
// what the tools verify it with:
// - probeAgent: the open paths (/healthz, /readyz), with no credential;
// - readAgentEndpoint: a protected path (/federatedresources, /metrics) with the admin client
//   certificate of that space, which its RBAC allows (system:masters): what the demo shows.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { ProbeResult } from '../kube/wait.js';
import { probeHttps } from './health.js';
import type { SpaceLayout } from './layout.js';
import { readAdminCredentials, spacePkiFiles } from './space-pki.js';

/** A local agent's endpoints: its port, and the space it delegates to (whose CA signed its certificate). */
export interface AgentEndpoint {
  port: number;
  delegate: SpaceLayout;
}

export const agentUrl = (cmd: AgentEndpoint, pathname: string): string => `https://127.0.0.1:${cmd.port}${pathname}`;

export function probeAgent(cmd: AgentEndpoint, pathname: '/healthz' | '/readyz', timeoutMs = 2000): Promise<ProbeResult> {
  let ca: string;
  try {
    ca = readFileSync(spacePkiFiles(cmd.delegate.dir).caCert, 'utf8');
  } catch (err) {
    return Promise.resolve({ ok: false, detail: (err as Error).message });
  }
  return probeHttps(cmd.port, pathname, ca, timeoutMs);
}

export interface EndpointAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** GET `pathname` of the agent as the admin of the space it delegates to; a connection failure rejects. */
export function readAgentEndpoint(cmd: AgentEndpoint, pathname: string, timeoutMs = 10_000): Promise<EndpointAnswer> {
  const { ca, client } = readAdminCredentials(cmd.delegate.dir);
  return new Promise((resolve, reject) => {
    const req = https.get(agentUrl(cmd, pathname), { ca, cert: client.certPem, key: client.keyPem, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}
