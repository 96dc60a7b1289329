#!/usr/bin/env node
// How much of Kubernetes' validation of the denatured kinds the invalid-object tables exercise
// (test/fixtures/invalid-native-objects.ts): builds ksview-native with Go coverage of the
// validation packages, sends it every invalid object (a create) and every invalid update (the
// valid object as the live one, then the change), and prints statement coverage per package and
// the functions never reached. Needs Go and a build (`npx tsc -p .`); no spaces.
//
//   node test/tools/native-validation-coverage.mjs
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const PACKAGES = ['./ksview-native', 'k8s.io/kubernetes/pkg/apis/rbac/validation', 'k8s.io/kubernetes/pkg/apis/admissionregistration/validation',
  'k8s.io/kubernetes/pkg/apis/flowcontrol/validation', 'k8s.io/kubernetes/pkg/apis/core/validation', 'k8s.io/kube-aggregator/pkg/apis/apiregistration/validation'];
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ksview-native-coverage-'));
const covdir = path.join(tmp, 'cov');
const socket = path.join(tmp, 'sock');
const bin = path.join(tmp, 'ksview-native');
const go = (args, opts = {}) => spawnSync('go', args, { cwd: path.join(root, 'build', 'kubernetes'), encoding: 'utf8', ...opts });

process.stderr.write('building ksview-native with coverage of the validation packages\n');
let r = go(['build', '-cover', `-coverpkg=${PACKAGES.join(',')}`, '-o', bin, './ksview-native'], { env: { ...process.env, GOFLAGS: '-mod=readonly' } });
if (r.status !== 0) { process.stderr.write(r.stderr); process.exit(2); }
spawnSync('mkdir', ['-p', covdir]);
const helper = spawn(bin, ['--socket', socket], { env: { ...process.env, GOCOVERDIR: covdir }, stdio: ['pipe', 'ignore', 'ignore'] });
const call = (method, p, live, body) => new Promise((resolve, reject) => {
  const liveBytes = Buffer.from(live ? JSON.stringify(live) : '');
  const req = http.request({ socketPath: socket, path: p, method, headers: { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json', 'x-ksview-live-length': String(liveBytes.length) } },
    (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
  req.on('error', reject);
  req.end(Buffer.concat([liveBytes, Buffer.from(JSON.stringify(body))]));
});
for (let i = 0; ; i++) {
  try { await new Promise((res, rej) => http.get({ socketPath: socket, path: '/healthz' }, (x) => { x.resume(); x.on('end', res); }).on('error', rej)); break; } catch { if (i > 100) throw new Error('ksview-native did not start'); await new Promise((res) => setTimeout(res, 100)); }
}
const { INVALID_OBJECTS, INVALID_UPDATES } = await import(path.join(root, 'dist', 'test', 'fixtures', 'invalid-native-objects.js'));
const codes = {};
const count = (c) => { codes[c] = (codes[c] ?? 0) + 1; };
for (const c of INVALID_OBJECTS) count(await call('POST', c.collection, undefined, c.object));
for (const c of INVALID_UPDATES) {
  const live = { ...c.object, metadata: { ...c.object.metadata, uid: '00000000-0000-0000-0000-000000000001', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' } };
  const name = c.object.metadata.name;
  count(await call('PATCH', `${c.collection}/${name}${c.subresource ? `/${c.subresource}` : ''}`, live, c.patch));
}
helper.stdin.end();
await new Promise((res) => helper.on('exit', res));
process.stdout.write(`${INVALID_OBJECTS.length} invalid objects, ${INVALID_UPDATES.length} invalid updates; answers by code: ${JSON.stringify(codes)}\n\n`);
r = go(['tool', 'covdata', 'percent', '-i', covdir]);
process.stdout.write(r.stdout);
r = go(['tool', 'covdata', 'func', '-i', covdir]);
const never = r.stdout.split('\n').filter((l) => /\/validation\//.test(l) && /\s0\.0%$/.test(l) && !/core\/validation/.test(l));
process.stdout.write(`\nfunctions never reached (core/validation left out: it is mostly Pods):\n${never.map((l) => `  ${l.replace(/^.*\/pkg\/apis\//, '').replace(/\s+/g, ' ')}`).join('\n')}\n`);
rmSync(tmp, { recursive: true, force: true });
