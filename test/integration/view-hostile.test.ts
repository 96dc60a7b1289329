// 300 malformed or hostile requests to ksview serve (bad JSON and YAML, wrong content types, huge
// bodies, path traversal, unknown verbs, oversized headers, bad queries, unknown paths), each
// answered with a 4xx Kubernetes Status whose code matches the HTTP status; the server stays up.
// Most go straight to the server as the admin (so they reach the deepest code); some go through
// kube-apiserver's aggregator, as kubectl's would.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { rawRequest, type RawRequest } from '../fixtures/raw-client.js';
import { layout, uniqueName, kcOk, kc } from '../fixtures/spaces.js';

const wds = layout.spaces.find((s) => s.name === 'wds1')!;
const pki = (f: string) => readFileSync(path.join(wds.dir, 'pki', f));
const admin = { cert: pki('admin.crt'), key: pki('admin.key'), ca: pki('ca.crt') };
const viewPath = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';
const DIRECT = { port: layout.viewServerPort, ...admin };
const AGGREGATED = { port: wds.apiserverPort, ...admin };

interface Hostile extends RawRequest {
  name: string;
}

function cases(ns: string): Hostile[] {
  const cms = `${viewPath}/api/v1/namespaces/${ns}/configmaps`;
  const json = { 'content-type': 'application/json' };
  const out: Hostile[] = [];
  const badJson = ['{', '{"a":', '[1,2', 'nul', '{"metadata":{"name":}}', '\u0000\u0001', '{"a":1}}', "{'single':'quotes'}", '{"x":1,}', '--'];
  for (const b of badJson) out.push({ name: `bad JSON ${JSON.stringify(b)}`, method: 'POST', path: cms, headers: json, body: b });
  for (const b of badJson) out.push({ name: `bad JSON merge patch ${JSON.stringify(b)}`, method: 'PATCH', path: `${cms}/x`, headers: { 'content-type': 'application/merge-patch+json' }, body: b });
  const badYaml = ['a: [', 'a: {b', ': : :', 'key: "unterminated', '- a\nb: c', '{{{'];
  for (const b of badYaml) out.push({ name: `bad YAML ${JSON.stringify(b)}`, method: 'POST', path: cms, headers: { 'content-type': 'application/yaml' }, body: b });
  for (const b of badYaml) out.push({ name: `bad apply YAML ${JSON.stringify(b)}`, method: 'PATCH', path: `${cms}/x?fieldManager=t`, headers: { 'content-type': 'application/apply-patch+yaml' }, body: b });
  for (const ct of ['text/plain', 'application/xml', 'image/png', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded']) {
    out.push({ name: `content type ${ct}`, method: 'POST', path: cms, headers: { 'content-type': ct }, body: 'apiVersion=v1' });
  }
  out.push({ name: 'PATCH with a non-patch content type', method: 'PATCH', path: `${cms}/x`, headers: json, body: '{}' });
  const huge = Buffer.alloc(3 * 1024 * 1024 + 1, 0x20);
  for (let i = 0; i < 4; i++) out.push({ name: `huge body ${i}`, method: 'POST', path: cms, headers: json, body: huge });
  out.push({ name: 'huge YAML body', method: 'POST', path: cms, headers: { 'content-type': 'application/yaml' }, body: huge });
  const traversal = ['..%2f..%2fapi%2fv1%2fsecrets', '%2e%2e/%2e%2e/api/v1/secrets', '..%5c..%5capi', 'x/%2e%2e/%2e%2e/api/v1/nodes', '%00', 'a%2Fb',
    'namespaces/..%2fkube-system/secrets', 'namespaces/%2e%2e/secrets', '%', '%zz'];
  for (const p of traversal) out.push({ name: `traversal ${p}`, method: 'GET', path: `${viewPath}/api/v1/${p}` });
  for (const p of ['/..%2f..%2fapis', `${viewPath}/..%2f..%2f..%2fspaces`, '/apis/view.kubestellar.io/v1alpha1/spaces/%2e%2e']) out.push({ name: `traversal ${p}`, method: 'GET', path: p });
  for (const m of ['PROPFIND', 'TRACE', 'MKCOL', 'LOCK', 'FOO', 'BREW']) out.push({ name: `verb ${m}`, method: m, path: cms });
  const unknown = ['/nope', '/apis/view.kubestellar.io/v1alpha1/bogus', '/apis/view.kubestellar.io/v1alpha1/spaces/other', `${viewPath}/api/v1/nonsense`,
    `${viewPath}/apis/no.such.group/v1/things`, `${viewPath}/api/v1/namespaces/${ns}/events`, `${viewPath}/api/v1/nodes`, `${viewPath}/apis/coordination.k8s.io/v1/leases`,
    `${viewPath}/apis/control.kubestellar.io/v1alpha1/bindingpolicies`, `${viewPath}/apis/denatured.kubestellar.io`, '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/other'];
  for (const p of unknown) out.push({ name: `unknown ${p}`, method: 'GET', path: p });
  for (const q of ['limit=abc', 'resourceVersionMatch=Sometimes', 'fieldSelector=spec.x%3Dy', 'labelSelector=%3D%3D%3D', 'timeoutSeconds=abc', 'continue=garbage']) {
    out.push({ name: `query ${q}`, method: 'GET', path: `${cms}?${q}` });
  }
  out.push({ name: 'giant header', method: 'GET', path: cms, headers: { 'x-giant': 'a'.repeat(70_000) } });
  out.push({ name: 'unacceptable Accept', method: 'GET', path: `${cms}`, headers: { accept: 'application/zzz' } });
  out.push({ name: 'POST spaces', method: 'POST', path: '/apis/view.kubestellar.io/v1alpha1/spaces', headers: json, body: '{}' });
  out.push({ name: 'DELETE spaces', method: 'DELETE', path: '/apis/view.kubestellar.io/v1alpha1/spaces/wds1' });
  out.push({ name: 'object with no name', method: 'POST', path: cms, headers: json, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}' });
  out.push({ name: 'wrong kind in body', method: 'POST', path: cms, headers: json, body: '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}' });
  out.push({ name: 'namespace mismatch', method: 'POST', path: cms, headers: json, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m","namespace":"elsewhere"}}' });
  out.push({ name: 'invalid name', method: 'POST', path: cms, headers: json, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Not_Valid"}}' });
  return out;
}

t.test('300 hostile requests each get a 4xx Status and the server stays up', async (t) => {
  const ns = uniqueName('hostile');
  kcOk('wds1', ['create', 'namespace', ns]);
  t.teardown(() => { kc('wds1', ['delete', 'namespace', ns, '--wait=false']); });
  const base = cases(ns);
  const plan: Array<{ h: Hostile; target: typeof DIRECT; via: string }> = [];
  // Cycle the catalogue until 300: straight to the server, and every fourth through kube-apiserver
  // (not the raw-parser cases: kube-apiserver answers those itself before any proxying).
  for (let i = 0; plan.length < 300; i++) {
    const h = base[i % base.length]!;
    const viaAggregator = i % 4 === 3 && !/^verb |giant header|^traversal (\/|%$|%zz)|^unknown \/(nope|apis\/view)|spaces$/.test(h.name) && h.path.startsWith(viewPath);
    plan.push({ h, target: viaAggregator ? AGGREGATED : DIRECT, via: viaAggregator ? 'aggregator' : 'direct' });
  }
  t.equal(plan.length, 300);
  const failures: string[] = [];
  let aggregated = 0;
  for (let i = 0; i < plan.length; i += 10) {
    const batch = plan.slice(i, i + 10);
    const results = await Promise.all(batch.map(({ h, target }) => rawRequest(target, h)));
    results.forEach((r, j) => {
      const { h, via } = batch[j]!;
      if (via === 'aggregator') aggregated++;
      let status: { kind?: string; code?: number } = {};
      try { status = JSON.parse(r.body); } catch { /* checked below */ }
      if (r.status < 400 || r.status >= 500 || status.kind !== 'Status' || status.code !== r.status) {
        failures.push(`${via} ${h.name}: HTTP ${r.status} ${r.body.slice(0, 160)}`);
      }
    });
  }
  t.same(failures, [], 'every answer is a 4xx Status');
  t.ok(aggregated >= 40, `${aggregated} went through the aggregator`);
  const health = await rawRequest(DIRECT, { method: 'GET', path: '/healthz' });
  t.equal(health.status, 200, 'the server is still up');
  t.equal(kc('wds1-view', ['-n', ns, 'get', 'configmaps', '-o', 'name']).stdout.trim(), '', 'and nothing was created');
});
