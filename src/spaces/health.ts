// Health probes over HTTPS on loopback: kube-apiserver's /readyz with the admin client cert, and
// the /healthz that kube-controller-manager and kube-scheduler serve without authentication.
import https from 'node:https';
import type { ProbeResult } from '../kube/wait.js';
import { readAdminCredentials } from './space-pki.js';

function get(url: string, options: https.RequestOptions, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const req = https.get(url, { ...options, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { if (body.length < 4096) body += c; });
      res.on('end', () => resolve({ ok: res.statusCode === 200, detail: `${res.statusCode} ${body.trim().split('\n').pop() ?? ''}` }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ ok: false, detail: err.message }));
  });
}

export function probeApiserver(spaceDir: string, port: number, timeoutMs = 2000): Promise<ProbeResult> {
  const { ca, client } = readAdminCredentials(spaceDir);
  return get(`https://127.0.0.1:${port}/readyz`, { ca, cert: client.certPem, key: client.keyPem }, timeoutMs);
}

/** kube-controller-manager and kube-scheduler serve self-signed certs; only liveness is asked. */
export function probeComponent(port: number, timeoutMs = 2000): Promise<ProbeResult> {
  return get(`https://127.0.0.1:${port}/healthz`, { rejectUnauthorized: false }, timeoutMs);
}
