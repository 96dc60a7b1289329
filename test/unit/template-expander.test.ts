// TemplateExpander with the real ksview-gotemplate (built here with `go build`, stdlib only):
// KubeStellar's template expansion by Go's text/template — actions, pipelines, functions; every
// leaf string and never a key; Go's own messages for a missing property or a bad template, named
// by place (and in KubeStellar's form with templateName); several destinations per request; a
// helper that dies or runs away is replaced; a missing helper is a clear error; the bounds (a
// template bomb refused at the object's limit, printf's widths refused before they are built and a
// loop that writes nothing stopped at the object's time limit, by the same helper that then serves
// the next request, one time limit for all the batches of an object, destinations asked for in
// batches that fit the answer's, and the helper's own Go tests of them). Also templateProperties (KubeStellar's four
// sources, Go identifiers only) and templateName.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { TemplateExpander, templateName, templateProperties, isGoIdentifier, type ExpansionLimits } from '../../src/controllers/placement/template-expander.js';
import { FramedProcess } from '../../src/kube/framed-process.js';
import type { JsonObject } from '../../src/kube/objects.js';
import { repoRoot } from '../../src/util/repo-root.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-gotemplate-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const binary = path.join(dir, 'ksview-gotemplate');
await promisify(execFile)('go', ['build', '-trimpath', '-o', binary, './ksview-gotemplate'], {
  cwd: path.join(repoRoot(), 'build', 'kubernetes'),
  env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' },
});

function expander(t: Test, timeoutMs?: number, limits?: ExpansionLimits): TemplateExpander {
  const e = new TemplateExpander(binary, { timeoutMs, limits });
  t.teardown(() => e.close());
  return e;
}

// KubeStellar's documented example (transforming.md, "Template Expansion").
const forwarder = (): JsonObject => ({
  apiVersion: 'logging.openshift.io/v1',
  kind: 'ClusterLogForwarder',
  metadata: { name: 'instance', namespace: 'openshift-logging', annotations: { 'control.kubestellar.io/expand-templates': 'true' } },
  spec: { outputs: [{ name: 'remote-loki', type: 'loki', url: 'https://my.loki.server.com/{{ .clusterName }}-{{.clusterHash}}' }] },
});

t.test("the documented example: each destination gets its own expansion; one without clusterHash gets Go's message", async (t) => {
  const e = expander(t);
  const [virgo, wec1] = await e.expand(forwarder(), [{ clusterName: 'virgo', clusterHash: '1001-dead-beef' }, { clusterName: 'wec1' }]);
  const expected = forwarder();
  (expected.spec as { outputs: JsonObject[] }).outputs[0]!.url = 'https://my.loki.server.com/virgo-1001-dead-beef';
  t.same(virgo, { object: expected });
  const message = 'template: $.spec.outputs[0].url:1:48: executing "$.spec.outputs[0].url" at <.clusterHash>: map has no entry for key "clusterHash"';
  t.same(wec1, { error: message, errors: [message] });
});

t.test("with templateName the messages are KubeStellar's, word for word", async (t) => {
  const e = expander(t);
  const obj = forwarder();
  const name = templateName('wec1', obj);
  t.equal(name, 'wec1/ClusterLogForwarder.logging.openshift.io(openshift-logging/instance)');
  const [r] = await e.expand(obj, [{ clusterName: 'wec1' }], [name]);
  t.equal((r as { error: string }).error,
    `template: ${name}.spec.outputs[0].url:1:48: executing "${name}.spec.outputs[0].url" at <.clusterHash>: map has no entry for key "clusterHash"`);
  t.equal(templateName('wec2', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } }), 'wec2/Namespace(ns1)');
});

const SLICE_ERROR = 'template: $.sliced:1:3: executing "$.sliced" at <slice .clusterName 0 2>: error calling slice: index out of range: 2';

t.test("every action Go's text/template has: printf, if/else, pipelines, index, range, variables", async (t) => {
  const e = expander(t);
  const obj: JsonObject = {
    printf: '{{ printf "%s-%03d" .clusterName 7 }}',
    ifElse: '{{ if eq .region "eu" }}europe{{ else if eq .region "us" }}america{{ else }}elsewhere{{ end }}',
    pipeline: '{{ .clusterName | printf "%q" | len }}',
    index: '{{ index . "region" }}',
    variable: '{{ $n := .clusterName }}{{ $n }}{{ $n }}',
    range: '{{ range $i := 3 }}{{ $i }}{{ end }}',
    sliced: '{{ slice .clusterName 0 2 }}',
    trim: '  {{- .clusterName -}}  ',
    comment: 'a{{/* nothing */}}b',
  };
  const results = await e.expand(obj, [{ clusterName: 'wec1', region: 'eu' }, { clusterName: 'c2', region: 'us' }, { clusterName: 'x', region: '' }]);
  t.same(results, [
    { object: { printf: 'wec1-007', ifElse: 'europe', pipeline: '6', index: 'eu', variable: 'wec1wec1', range: '012', sliced: 'we', trim: 'wec1', comment: 'ab' } },
    { object: { printf: 'c2-007', ifElse: 'america', pipeline: '4', index: 'us', variable: 'c2c2', range: '012', sliced: 'c2', trim: 'c2', comment: 'ab' } },
    { error: SLICE_ERROR, errors: [SLICE_ERROR] },
  ]);
});

t.test('keys are never expanded; numbers, booleans and null are untouched; key order is kept', async (t) => {
  const e = expander(t);
  const obj: JsonObject = {
    z: 1.5, '{{.clusterName}}': '{{.clusterName}}', a: [true, null, 0, -2e-7, 12345678901234567890, '{{"lit"}}'],
    m: { '{{ .key }}': { deep: ['x', { y: 'in {{ .clusterName }}' }] } }, html: '<&> {{ "<b>" }}', s: 'no template }}',
  };
  const [r] = await e.expand(obj, [{ clusterName: 'wec1' }]);
  const out = (r as { object: JsonObject }).object;
  t.same(out, {
    z: 1.5, '{{.clusterName}}': 'wec1', a: [true, null, 0, -2e-7, 12345678901234567890, 'lit'],
    m: { '{{ .key }}': { deep: ['x', { y: 'in wec1' }] } }, html: '<&> <b>', s: 'no template }}',
  }, 'text/template escapes nothing');
  t.same(Object.keys(out), ['z', '{{.clusterName}}', 'a', 'm', 'html', 's']);
});

t.test('a string without "{{" is left as it is (KubeStellar parses only strings holding "{{")', async (t) => {
  const e = expander(t);
  const obj: JsonObject = { a: 'plain }} text', b: '{ {.x} }', c: '' };
  t.same(await e.expand(obj, [{ clusterName: 'wec1' }, {}]), [{ object: obj }, { object: obj }]);
});

t.test('parse errors, and every error of a destination in document order', async (t) => {
  const e = expander(t);
  const [r] = await e.expand({ spec: { a: 'fine {{ .clusterName }}', b: '{{ .clusterName', c: ['{{ .missing }}'], d: '{{ nofunc }}' } }, [{ clusterName: 'wec1' }]);
  t.same(r, {
    error: 'template: $.spec.b:1: unclosed action',
    errors: [
      'template: $.spec.b:1: unclosed action',
      'template: $.spec.c[0]:1:3: executing "$.spec.c[0]" at <.missing>: map has no entry for key "missing"',
      'template: $.spec.d:1: function "nofunc" not defined',
    ],
  });
});

t.test('no destinations: no request; names must match the destinations', async (t) => {
  const e = new TemplateExpander('/nonexistent/ksview-gotemplate');
  t.same(await e.expand({ a: '{{.x}}' }, []), []);
  await t.rejects(expander(t).expand({ a: 'x' }, [{}], ['$', '$']), { message: '2 template names for 1 destinations' });
});

t.test('a missing helper is a clear error', async (t) => {
  const e = new TemplateExpander('/nonexistent/bin/ksview-gotemplate');
  t.teardown(() => e.close());
  await t.rejects(e.expand({ a: '{{ .clusterName }}' }, [{ clusterName: 'wec1' }]),
    { message: /^the template helper ksview-gotemplate is missing: \/nonexistent\/bin\/ksview-gotemplate/ });
});

/** The pid of this process's child running `binary` (the helper under test), from /proc. */
function helperPid(): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] === binary) return Number(entry);
    } catch { /* gone meanwhile */ }
  }
  return undefined;
}

t.test('a helper killed mid-request fails that request; the next one gets a new helper', async (t) => {
  const e = expander(t);
  t.same(await e.expand({ a: '{{ .clusterName }}' }, [{ clusterName: 'wec1' }]), [{ object: { a: 'wec1' } }]);
  const pid = helperPid();
  t.ok(pid, 'the helper runs');
  const busy = e.expand({ a: '{{ range 2000000000 }}{{ end }}' }, [{}]);
  process.kill(pid!, 'SIGKILL');
  await t.rejects(busy, { message: 'ksview-gotemplate exited (SIGKILL)' });
  t.same(await e.expand({ a: '{{ .clusterName }}' }, [{ clusterName: 'wec2' }]), [{ object: { a: 'wec2' } }]);
  t.not(helperPid(), pid, 'a new helper');
});

t.test('a template that runs away is stopped: by the size limit, or by the timeout', async (t) => {
  const e = expander(t, 1500);
  const [big] = await e.expand({ a: '{{ range 100000000 }}0123456789{{ end }}' }, [{}]);
  t.match(big, { error: "template: $.a: the object's expansion is over the limit of 512000 bytes" });
  await t.rejects(e.expand({ a: '{{ range 2000000000 }}{{ end }}' }, [{}]), { message: 'ksview-gotemplate did not answer within 1500ms (killed)' });
  t.same(await e.expand({ a: '{{ .clusterName }}' }, [{ clusterName: 'wec1' }]), [{ object: { a: 'wec1' } }]);
});

/** The peak resident memory of process `pid` (VmHWM), in bytes. */
const peakRss = (pid: number) => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

t.test('bombs that write nothing are refused on their own, soon, and the same helper serves the next request', async (t) => {
  const e = expander(t);
  t.same(await e.expand({ a: '{{ .clusterName }}' }, [{ clusterName: 'wec1' }]), [{ object: { a: 'wec1' } }]);
  const pid = helperPid()!;
  // The finding's 2.2 KB template: 200 widths of 999,999 kept in a variable (the old helper built 1.4 GB).
  const widths = `{{$x := printf "${'%0999999d'.repeat(200)}"${' 0'.repeat(200)}}}ok`;
  const [memory] = await e.expand({ a: widths }, [{ clusterName: 'wec1' }]);
  t.match(memory, { error: /^template: \$\.a:1:8: executing "\$\.a" at <printf .*>: error calling printf: the object's expansion would build strings over the limit of 2048000 bytes$/ });
  t.ok(peakRss(pid) < 64 << 20, `the helper's peak memory stays under 64 MB (${peakRss(pid)} bytes)`);
  // A loop that writes nothing: a billion squared iterations, for two destinations.
  const started = Date.now();
  const looped = await e.expand({ a: '{{range 1000000000}}{{range 1000000000}}{{end}}{{end}}' }, [{ clusterName: 'wec1' }, { clusterName: 'wec2' }]);
  const took = Date.now() - started;
  t.same(looped, ['wec1', 'wec2'].map(() => ({ error: "template: $.a: the object's expansion took over 2000 ms", errors: ["template: $.a: the object's expansion took over 2000 ms"] })));
  t.ok(took < 6000, `answered in ${took} ms, well within the 20 s after which the helper is killed`);
  t.same(await e.expand({ a: '{{ .clusterName }}' }, [{ clusterName: 'wec2' }]), [{ object: { a: 'wec2' } }]);
  t.equal(helperPid(), pid, 'the same helper');
});

t.test("an object's batches share one time limit: a loop for 8 destinations asked one at a time stops once", async (t) => {
  // An answer of 3,000 bytes holds one destination: 8 requests.
  const e = expander(t, undefined, { object: 1000, answer: 3000, millis: 500 });
  const props = Array.from({ length: 8 }, (_, i) => ({ clusterName: `c${i}` }));
  const started = Date.now();
  const results = await e.expand({ a: '{{range 1000000000}}{{end}}' }, props);
  const took = Date.now() - started;
  t.same(results.map((r) => 'error' in r && r.error), props.map(() => "template: $.a: the object's expansion took over 500 ms"));
  t.ok(took < 2500, `all 8 answered in ${took} ms (one time limit, not 8 × 500 ms)`);
});

t.test("the issue's template bomb: every destination refused at the object's limit, with Go's words; the answer stays small", async (t) => {
  const e = expander(t);
  const data: Record<string, string> = {};
  for (let i = 0; i < 10; i++) data[`k${i}`] = `{{range 8000}}${'x'.repeat(1000)}{{end}}`;
  const obj: JsonObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bomb', namespace: 'ns' }, data };
  const names = ['wec1', 'wec2'].map((c) => templateName(c, obj));
  const started = process.memoryUsage().rss;
  const results = await e.expand(obj, [{ clusterName: 'wec1' }, { clusterName: 'wec2' }], names);
  t.same(results.map((r) => 'error' in r && r.error), names.map((n) => `template: ${n}.data.k0: the object's expansion is over the limit of 512000 bytes`));
  t.ok(process.memoryUsage().rss - started < 32 << 20, 'no expansion reached this process');
});

t.test('destinations are asked for in batches that fit the answer: 60 objects of 400 KB (24 MB) all expand', async (t) => {
  const e = expander(t);
  const props = Array.from({ length: 60 }, (_, i) => ({ clusterName: `c${i}` }));
  const results = await e.expand({ a: `{{ .clusterName }}{{ range 400 }}${'y'.repeat(1000)}{{ end }}` }, props);
  t.equal(results.length, 60);
  t.same(results.map((r) => ('object' in r ? (r.object.a as string).slice(0, 4) : r.error)), props.map((p) => p.clusterName.padEnd(4, 'y')));
});

t.test("the helper's own Go tests of its bounds pass (go test ./ksview-gotemplate)", async (t) => {
  const { stdout } = await promisify(execFile)('go', ['test', '-count=1', './ksview-gotemplate'], {
    cwd: path.join(repoRoot(), 'build', 'kubernetes'),
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' },
  });
  t.match(stdout, /^ok\s+kubestellar-view\/build\/kubernetes\/ksview-gotemplate/);
});

t.test('the helper answers a malformed request with an error and keeps serving', async (t) => {
  const p = new FramedProcess(binary);
  t.teardown(() => p.close());
  t.match(await p.requestJson({}), { error: 'malformed request: no object' });
  t.match(JSON.parse((await p.request(Buffer.from('not json'))).toString()), { error: /^malformed request: invalid character/ });
  t.match(await p.requestJson({ object: {}, properties: [{ clusterName: 1 }] }), { error: /^malformed request: json: cannot unmarshal number/ });
  t.match(await p.requestJson({ object: {}, properties: [{}], names: [] }), { error: 'malformed request: 0 names for 1 property maps' });
  t.match(await p.requestJson({ object: '{{ .a }}', properties: [{ a: 'top' }] }), { results: [{ object: 'top' }], millis: Number });
});

t.test("templateProperties: KubeStellar's four sources in decreasing precedence", async (t) => {
  const cluster = {
    name: 'wec1',
    labels: { region: 'from-label', tier: 'from-label', clusterName: 'label-wins-over-built-in', only_label: 'l' },
    annotations: { region: 'from-annotation', tier: 'from-annotation', only_annotation: 'a' },
  };
  const configMap = { data: { region: 'from-configmap' }, binaryData: { blob: Buffer.from('bytes ✓').toString('base64') } };
  t.same(templateProperties(cluster, configMap), {
    clusterName: 'label-wins-over-built-in', region: 'from-configmap', tier: 'from-annotation',
    only_label: 'l', only_annotation: 'a', blob: 'bytes ✓',
  });
  t.same(templateProperties({ name: 'wec2' }), { clusterName: 'wec2' });
});

t.test('templateProperties: only keys that are Go identifiers (Unicode letters and digits, not keywords)', async (t) => {
  const labels = {
    'app.kubernetes.io/name': 'x', 'kebab-case': 'x', '1st': 'x', type: 'x', range: 'x', '': 'x',
    _under: 'u', größe: 'g', 名前: 'n', x١: 'arabic-indic digit', Type: 'T', __proto__x: 'p',
  };
  t.same(templateProperties({ name: 'c', labels }), {
    clusterName: 'c', _under: 'u', größe: 'g', 名前: 'n', x١: 'arabic-indic digit', Type: 'T', __proto__x: 'p',
  });
  t.ok(isGoIdentifier('__proto__'));
  t.same(Object.keys(templateProperties({ name: 'c', annotations: JSON.parse('{"__proto__":"kept"}') as Record<string, string> })),
    ['clusterName', '__proto__'], '__proto__ is a property like any other');
});
