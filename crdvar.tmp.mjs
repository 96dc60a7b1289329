import { KubeConfig } from '@kubernetes/client-node';
import { Pool } from 'undici';
import { performance } from 'node:perf_hooks';
const kc = new KubeConfig(); kc.loadFromFile(process.env.HOME + '/.local/state/kubestellar-view/spaces/kubeconfig'); kc.setCurrentContext('wds1');
const o = {}; await kc.applyToHTTPSOptions(o);
const pool = new Pool(new URL(kc.getCurrentCluster().server).origin, { connect: { ca: o.ca, cert: o.cert, key: o.key } });
const call = async (m, p, body, ct='application/json') => { const t0=performance.now(); const r = await pool.request({ method: m, path: p, headers: { 'content-type': ct, accept: 'application/json' }, body }); const txt = await r.body.text(); if (r.statusCode>=300 && !(m==='DELETE')) throw new Error(m+' '+p+' '+r.statusCode+txt.slice(0,300)); return [performance.now()-t0, txt]; };
const rules = (i) => Array.from({ length: 2000 }, (_, r) => ({ apiGroups: [`g${r}.example.com`], resources: [`things${r}`, `others${r}`], verbs: r === 0 ? ['get', `v${i}`] : ['get', 'list', 'watch'] }));
const med = (xs) => xs.sort((a,b)=>a-b)[Math.floor(xs.length/2)].toFixed(1);
const arr = { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' };
const variants = {
  full: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'object', required: ['verbs'], properties: { apiGroups: arr, resources: arr, verbs: arr, resourceNames: arr, nonResourceURLs: arr } } },
  preserve: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  nolisttype: { type: 'array', items: { type: 'object', required: ['verbs'], properties: { apiGroups: { type: 'array', items: { type: 'string' } }, resources: { type: 'array', items: { type: 'string' } }, verbs: { type: 'array', items: { type: 'string' } } } } },
};
for (const [v, schema] of Object.entries(variants)) {
  const plural = `crv${v}s`, group = 'crdvar.example.com';
  await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${group}` },
    spec: { group, scope: 'Cluster', names: { plural, kind: `Crv${v}`, singular: `crv${v}`, listKind: `Crv${v}List` }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { rules: schema } } } }] } }));
  const base = `/apis/${group}/v1/${plural}`;
  for (let t = 0; t < 60; t++) { try { await call('GET', base); break; } catch { await new Promise(r => setTimeout(r, 500)); } }
  await call('POST', base, JSON.stringify({ apiVersion: `${group}/v1`, kind: `Crv${v}`, metadata: { name: 'x' }, rules: rules(0) }));
  let [, txt] = await call('GET', `${base}/x`);
  const put = [];
  for (let i = 1; i < 14; i++) { const live = JSON.parse(txt); live.metadata.managedFields = [{}]; live.rules = rules(i); const [u, t2] = await call('PUT', `${base}/x`, JSON.stringify(live)); put.push(u); txt = t2; }
  console.log(v, 'PUT median', med(put));
  await call('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${group}`);
}
await pool.close();
