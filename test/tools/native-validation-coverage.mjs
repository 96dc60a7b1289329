#!/usr/bin/env node
// How much of Kubernetes' validation of the denatured kinds the invalid-object tables exercise
// (test/fixtures/invalid-native-objects.ts): builds ksview-native with Go coverage of the
// validation packages, sends it every invalid object (a create) and every invalid update (the
// valid object as the live one, then the change), and prints statement coverage per package and
// the functions never reached. Needs Go and a build (`npx tsc -p .`); no spaces.
//
//   node test/tools/native-validation-coverage.mjs
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
const accepted = [];
const count = (c, what) => { codes[c] = (codes[c] ?? 0) + 1; if (c < 400) accepted.push(what); };
for (const c of INVALID_OBJECTS) count(await call('POST', c.collection, undefined, c.object), c.what);
for (const c of INVALID_UPDATES) {
  const live = { ...c.object, metadata: { ...c.object.metadata, uid: '00000000-0000-0000-0000-000000000001', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' } };
  const name = c.object.metadata.name;
  count(await call('PATCH', `${c.collection}/${name}${c.subresource ? `/${c.subresource}` : ''}`, live, c.patch), c.what);
}
helper.stdin.end();
await new Promise((res) => helper.on('exit', res));
process.stdout.write(`${INVALID_OBJECTS.length} invalid objects, ${INVALID_UPDATES.length} invalid updates; answers by code: ${JSON.stringify(codes)}\n${accepted.map((w) => `  accepted, so not invalid: ${w}\n`).join('')}\n`);
r = go(['tool', 'covdata', 'percent', '-i', covdir]);
process.stdout.write(r.stdout);
// Rules never exercised: blocks of the validation packages that build a field error and were
// never run (for core/validation only the functions of LimitRange, ResourceQuota, ServiceAccount).
const profile = path.join(tmp, 'profile.txt');
go(['tool', 'covdata', 'textfmt', '-i', covdir, '-o', profile]);
// Where Go keeps the modules' sources (replace directives included).
const [kubeDir, aggregatorDir] = go(['list', '-m', '-f', '{{.Dir}}', 'k8s.io/kubernetes', 'k8s.io/kube-aggregator']).stdout.trim().split('\n');
const moduleDirs = { 'k8s.io/kubernetes/': `${kubeDir}/`, 'k8s.io/kube-aggregator/': `${aggregatorDir}/` };
const sources = new Map();
const sourceOf = (file) => {
  if (!sources.has(file)) {
    const [prefix, dir] = Object.entries(moduleDirs).find(([p]) => file.startsWith(p)) ?? [];
    sources.set(file, prefix ? readFileSync(dir + file.slice(prefix.length), 'utf8').split('\n') : []);
  }
  return sources.get(file);
};
const CORE_KINDS = /LimitRange|ResourceQuota|ServiceAccount|Scope|ResourceName|ResourceQuantityValue/;
const runs = new Map();
for (const line of readFileSync(profile, 'utf8').split('\n')) {
  const m = /^(\S+\/validation\/validation\.go):(\d+)\.\d+,(\d+)\.\d+ \d+ (\d+)$/.exec(line);
  if (!m) continue;
  const key = `${m[1]}:${m[2]}:${m[3]}`;
  runs.set(key, (runs.get(key) ?? 0) + Number(m[4]));
}
const unexercised = [];
for (const [key, count] of runs) {
  if (count > 0) continue;
  const [file, from, to] = key.split(':');
  const src = sourceOf(file);
  const text = src.slice(Number(from) - 1, Number(to)).join('\n');
  if (!/field\.(Invalid|Required|Forbidden|NotSupported|Duplicate|TooMany|TooLong|InternalError)\(/.test(text)) continue;
  let fn = '';
  for (let i = Number(from) - 1; i >= 0; i--) if (src[i].startsWith('func ')) { fn = /^func (?:\([^)]*\) )?(\w+)/.exec(src[i])?.[1] ?? ''; break; }
  if (/core\/validation/.test(file) && (!CORE_KINDS.test(fn) || /Pod/.test(fn))) continue;
  unexercised.push(`  ${file.replace(/^.*\/pkg\/apis\//, '')}:${from} ${fn}: ${src[Number(from) - 1].trim().slice(0, 110)}`);
}
process.stdout.write(`\nrules never exercised (blocks that build a field error; core: LimitRange, ResourceQuota, ServiceAccount only): ${unexercised.length}\n${unexercised.join('\n')}\n`);
rmSync(tmp, { recursive: true, force: true });
