// Health probes over HTTP(S) on loopback: etcd's /health with the health-check client cert,
// kube-apiserver's /readyz with the admin client cert, the /healthz that kube-controller-manager,
// kube-scheduler and `ksview serve` serve without authentication, and the agents' open /healthz
// and /readyz over HTTPS (agent-endpoints.ts). A probe never throws: no answer is a result that
// is not ok.
import http from 'node:http';
import https from 'node:https';
import type { ProbeResult } from '../kube/wait.js';
import { etcdProbeCredentials } from './component-certs.js';
import { etcdClientUrl } from './components.js';
import type { SpacesLayout } from './layout.js';
import { readAdminCredentials } from './space-pki.js';

/** GETs `url` and judges the status and (the start of) the body. */
function probe(url: string, options: https.RequestOptions, timeoutMs: number,
  judge: (status: number | undefined, body: string) => ProbeResult): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const req = (url.startsWith('https:') ? https : http).get(url, { ...options, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { if (body.length < 4096) body += c; });
      res.on('end', () => resolve(judge(res.statusCode, body)));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ ok: false, detail: err.message }));
  });
}

/** /readyz and /healthz: 200, with the last line of the body as detail. */
const healthz = (status: number | undefined, body: string): ProbeResult => ({ ok: status === 200, detail: `${status} ${body.trim().split('\n').pop() ?? ''}` });

/** etcd answers only clients with a certificate of its CA: the probes have their own. */
export function probeEtcd(layout: SpacesLayout, timeoutMs = 2000): Promise<ProbeResult> {
  let creds: ReturnType<typeof etcdProbeCredentials>;
  try {
    creds = etcdProbeCredentials(layout.dir);
  } catch {
    return Promise.resolve({ ok: false, detail: `no etcd client certificate in ${layout.dir} (spaces of an older version: 'ksview spaces up' upgrades them)` });
  }
  const { ca, client } = creds;
  return probe(`${etcdClientUrl(layout)}/health`, { ca, cert: client.certPem, key: client.keyPem }, timeoutMs,
    (status, body) => ({ ok: status === 200 && body.includes('"true"'), detail: body.trim() }));
}

export function probeApiserver(spaceDir: string, port: number, timeoutMs = 2000): Promise<ProbeResult> {
  const { ca, client } = readAdminCredentials(spaceDir);
  return probe(`https://127.0.0.1:${port}/readyz`, { ca, cert: client.certPem, key: client.keyPem }, timeoutMs, healthz);
}

/** kube-controller-manager and kube-scheduler serve self-signed certs; only liveness is asked. */
export function probeComponent(port: number, timeoutMs = 2000): Promise<ProbeResult> {
  return probe(`https://127.0.0.1:${port}/healthz`, { rejectUnauthorized: false }, timeoutMs, healthz);
}

/** A plain-HTTP /healthz or /readyz on loopback. */
export function probeHttp(port: number, pathname: string, timeoutMs = 2000): Promise<ProbeResult> {
  return probe(`http://127.0.0.1:${port}${pathname}`, {}, timeoutMs, healthz);
}

/** An HTTPS /healthz or /readyz on loopback whose certificate `ca` signed; no credential sent. */
export function probeHttps(port: number, pathname: string, ca: string, timeoutMs = 2000): Promise<ProbeResult> {
  return probe(`https://127.0.0.1:${port}${pathname}`, { ca }, timeoutMs, healthz);
}
