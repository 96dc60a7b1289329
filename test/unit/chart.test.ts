// charts/kubestellar-view, checked with the real helm (built from helm.sh/helm/v3 by ensureHelm,
// cached): `helm lint --strict` of every part, what `helm template` renders for each tls.type, the
// Pod Security `restricted` fields of every pod, the schema naming a wrong value, and the RBAC equal
// to what `ksview serve --register` and the local spaces grant. No cluster: `lookup` (the
// helm-made certificate kept across upgrades) is checked only as far as a render can show it
// (below); its real check is an upgrade against a cluster, the end-to-end test's.
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import {
  CRD_MANAGER_RULES, DENATURED_EDITOR_RULES, DENATURED_RBAC_ADMIN_RULES, DENATURED_WEBHOOK_CONFIGURATION, ESCALATION_CHECKER_RULES,
  IMPERSONATOR_RULES, POLICY_WEBHOOK_CONFIGURATION, VIEW_USER_RULES, WEBHOOK_CONFIGURATION,
} from '../../src/apiserver/wds-registration.js';
import { GROUP, VERSION } from '../../src/apiserver/groups/view-group.js';
import { pushMailboxRbac, renderRbac } from '../../src/spaces/agent-identities.js';
import { helmVersion } from '../../src/spaces/helm.js';
import { chartFile } from '../../src/util/chart-files.js';
import { repoRoot } from '../../src/util/repo-root.js';
import { CHART, CI, one, refused, render, run, useHelm, type Obj } from '../fixtures/chart.js';

// The first run builds helm (about a minute with a warm Go cache, several with a cold one).
t.setTimeout(20 * 60_000);
const helm = await useHelm();

const parts = readdirSync(CI).filter((f) => f.endsWith('-values.yaml')).sort();
const rulesOf = (objs: Obj[], kind: string, name: string) => one(objs, kind, name).rules as unknown[];

t.test('helm is built from helm.sh/helm/v3 at the pinned version and says so', async (t) => {
  t.equal(helmVersion(), 'v3.22.0');
  const r = spawnSync(helm, ['version', '--template', '{{ .Version }}'], { encoding: 'utf8' });
  t.equal(r.stdout.trim(), 'v3.22.0');
});

t.test('Chart.yaml: apiVersion v2, version and appVersion are package.json\'s', async (t) => {
  const chart = YAML.parse(readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')) as Record<string, string>;
  const pkg = JSON.parse(readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as { version: string };
  t.equal(chart.apiVersion, 'v2');
  t.equal(chart.version, pkg.version);
  t.equal(chart.appVersion, pkg.version);
});

t.test('helm lint --strict is clean for every part', async (t) => {
  t.same(parts, ['agent-pull-values.yaml', 'agent-push-values.yaml', 'its-values.yaml', 'server-existing-secret-values.yaml',
    'server-placement-values.yaml', 'server-values.yaml', 'wds-values.yaml'], 'one values file per part and tls.type');
  for (const f of parts) {
    const r = run(['lint', '--strict', '.', '-f', path.join(CI, f)]);
    t.equal(r.status, 0, `${f}: ${r.stdout}${r.stderr}`);
    t.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    t.notMatch(r.stdout, /\[(WARNING|ERROR)\]/, `${f}: no warning`);
  }
});

t.test('each part renders only what belongs to its cluster', async (t) => {
  const kinds = (f: string) => [...new Set(render([f]).map((o) => o.kind))].sort();
  t.same(kinds('server-values.yaml'), ['Deployment', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'Secret', 'Service', 'ServiceAccount']);
  t.same(kinds('server-placement-values.yaml'), ['Certificate', 'Deployment', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'Service', 'ServiceAccount', 'ServiceMonitor']);
  t.same(kinds('wds-values.yaml'), ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ServiceAccount']);
  t.same(kinds('its-values.yaml'), ['ClusterRole', 'ClusterRoleBinding', 'Namespace', 'ResourceQuota', 'Role', 'RoleBinding', 'ServiceAccount']);
  t.same(kinds('agent-pull-values.yaml'), ['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'Namespace', 'RoleBinding', 'ServiceAccount',
    'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
  t.same(kinds('agent-push-values.yaml'), ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'RoleBinding', 'ServiceAccount']);
  // Nothing of the WDS's is created in the hosting cluster: the server writes its APIService and
  // webhooks into the WDS itself.
  for (const f of parts) t.notOk(render([f]).some((o) => o.kind === 'APIService' || o.kind === 'ValidatingWebhookConfiguration'), f);
});

t.test('the server: flags, hosted registration from its own Service, graceful shutdown, probes, spread, PDB', async (t) => {
  const objs = render(['server-values.yaml']);
  const d = one(objs, 'Deployment');
  const svc = one(objs, 'Service');
  const c = d.spec.template.spec.containers[0];
  t.equal(d.spec.replicas, 2);
  t.same(d.spec.strategy.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
  t.equal(c.image, 'docker.io/kubestellar/kubestellar-view:0.1.0', 'tag = appVersion');
  t.equal(c.command, undefined, 'the image\'s entrypoint (ksview)');
  t.equal(c.args[0], 'serve');
  for (const flag of ['--wds-kubeconfig=/var/run/ksview/wds/kubeconfig', '--wds-name=wds1', '--bind-address=0.0.0.0', '--port=8443',
    '--cert-dir=/var/run/ksview/serving-cert', '--ksview-native=/app/bin/ksview-native', '--ksview-protojson=/app/bin/ksview-protojson',
    '--ksview-gotemplate=/app/bin/ksview-gotemplate', '--namespace=kubestellar-view', '--service=ksview', '--register',
    `--register-endpoints-from=kubestellar-view/${svc.metadata.name}`, '--shutdown-delay-duration=5s']) t.ok(c.args.includes(flag), flag);
  t.notOk(c.args.some((a: string) => a.startsWith('--its-kubeconfig') || a.startsWith('--default-executor')), 'no placement without an ITS');
  t.same(svc.spec.selector, d.spec.selector.matchLabels, 'the Service selects the server pods');
  t.same(svc.spec.ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 'https' }]);
  t.same(c.readinessProbe.httpGet, { scheme: 'HTTPS', path: '/readyz', port: 'https' });
  t.same(c.livenessProbe.httpGet, { scheme: 'HTTPS', path: '/healthz', port: 'https' });
  t.same(c.lifecycle.preStop, { sleep: { seconds: 5 } }, 'no shell in the image: the kubelet sleeps');
  t.ok(d.spec.template.spec.terminationGracePeriodSeconds >= 5 + 5 + 60, 'grace covers preStop, the shutdown delay and draining');
  const pdb = one(objs, 'PodDisruptionBudget');
  t.same(pdb.spec, { minAvailable: 1, selector: { matchLabels: d.spec.selector.matchLabels } });
  const spread = d.spec.template.spec.topologySpreadConstraints as any[];
  t.same(spread.map((s) => s.topologyKey), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
  for (const s of spread) t.same(s.labelSelector.matchLabels, d.spec.selector.matchLabels);
  const role = one(objs, 'Role');
  t.equal(role.metadata.name, `${svc.metadata.name}:endpoints-reader`);
  t.same(role.rules, [{ apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['services'], resourceNames: [svc.metadata.name], verbs: ['get', 'list', 'watch'] }],
  'reads its endpoints and its own Service (the owner the mirror checks), nothing else');
  t.same(one(objs, 'RoleBinding').subjects, [{ kind: 'ServiceAccount', name: d.spec.template.spec.serviceAccountName, namespace: 'kubestellar-view' }]);

  const placed = one(render(['server-placement-values.yaml']), 'Deployment').spec.template.spec;
  t.ok(placed.containers[0].args.includes('--its-kubeconfig=/var/run/ksview/its/kubeconfig'));
  t.ok(placed.containers[0].args.includes('--default-executor=kubestellar-view-executors/default-executor'));
  t.same(placed.volumes.find((v: any) => v.name === 'its-kubeconfig').secret.secretName, 'ksview-its-kubeconfig');
  const noReg = one(render(['server-values.yaml'], ['apiService.create=false']), 'Deployment').spec.template.spec.containers[0].args as string[];
  t.notOk(noReg.some((a) => a.startsWith('--register')), 'apiService.create=false: the server registers nothing');
  const values = one(render(['server-values.yaml'], ['replicas=3', 'image.tag=dev', 'image.repository=registry.example/ksview', 'priorityClassName=high',
    'nodeSelector.role=infra', 'wdsName=prod']), 'Deployment');
  t.equal(values.spec.replicas, 3);
  t.equal(values.spec.template.spec.containers[0].image, 'registry.example/ksview:dev');
  t.equal(values.spec.template.spec.priorityClassName, 'high');
  t.same(values.spec.template.spec.nodeSelector, { role: 'infra' });
  t.ok(values.spec.template.spec.containers[0].args.includes('--wds-name=prod'));
});

/** What Pod Security `restricted` (latest) demands of a pod, as the PodSecurity admission checks it. */
function restrictedViolations(spec: any): string[] {
  const out: string[] = [];
  const allowedVolumes = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) out.push('host namespaces');
  for (const v of spec.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== 'name');
    if (!type || !allowedVolumes.includes(type)) out.push(`volume ${v.name}: ${type}`);
  }
  const pod = spec.securityContext ?? {};
  if (pod.sysctls?.length) out.push('sysctls');
  if (pod.runAsUser === 0) out.push('pod runAsUser 0');
  const podSeccomp = pod.seccompProfile?.type;
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    const sc = c.securityContext ?? {};
    if (sc.privileged) out.push(`${c.name}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation must be false`);
    if (!(sc.runAsNonRoot === true || (sc.runAsNonRoot === undefined && pod.runAsNonRoot === true))) out.push(`${c.name}: runAsNonRoot`);
    if (sc.runAsUser === 0) out.push(`${c.name}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? podSeccomp;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${c.name}: seccompProfile`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) out.push(`${c.name}: capabilities must drop ALL`);
    for (const cap of sc.capabilities?.add ?? []) if (cap !== 'NET_BIND_SERVICE') out.push(`${c.name}: adds ${cap}`);
    for (const p of c.ports ?? []) if (p.hostPort) out.push(`${c.name}: hostPort`);
    if (sc.procMount && sc.procMount !== 'Default') out.push(`${c.name}: procMount`);
    if (sc.appArmorProfile && !['RuntimeDefault', 'Localhost'].includes(sc.appArmorProfile.type)) out.push(`${c.name}: appArmor`);
    if (sc.seLinuxOptions?.type && !['container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'].includes(sc.seLinuxOptions.type)) out.push(`${c.name}: seLinux`);
  }
  return out;
}

t.test('every pod the chart renders meets Pod Security restricted, non-root, read-only root, /tmp an emptyDir', async (t) => {
  const deployments = ['server-values.yaml', 'server-placement-values.yaml', 'server-existing-secret-values.yaml', 'agent-pull-values.yaml', 'agent-push-values.yaml']
    .flatMap((f) => render([f]).filter((o) => o.kind === 'Deployment').map((d) => ({ f, d })));
  t.equal(deployments.length, 5);
  for (const { f, d } of deployments) {
    const spec = d.spec.template.spec;
    t.same(restrictedViolations(spec), [], `${f}: ${d.metadata.name}`);
    t.equal(spec.securityContext.runAsUser, 65532, 'the image\'s UID');
    for (const c of spec.containers) {
      t.equal(c.securityContext.readOnlyRootFilesystem, true);
      const tmp = c.volumeMounts.find((m: any) => m.mountPath === '/tmp');
      t.ok(tmp && spec.volumes.find((v: any) => v.name === tmp.name).emptyDir, `${c.name}: /tmp is an emptyDir`);
      t.ok(c.readinessProbe && c.livenessProbe, 'probed');
      if (c.args[0] === 'agent') t.ok(c.args.includes('--bind-address=0.0.0.0'), 'the agent listens on the pod IP, where the kubelet probes');
    }
  }
  // The checker itself refuses what restricted refuses.
  const bad = structuredClone(deployments[0]!.d.spec.template.spec);
  bad.containers[0].securityContext = { ...bad.containers[0].securityContext, allowPrivilegeEscalation: true, capabilities: { add: ['SYS_ADMIN'] } };
  bad.volumes.push({ name: 'h', hostPath: { path: '/' } });
  t.same(restrictedViolations(bad), ['volume h: hostPath', 'ksview: allowPrivilegeEscalation must be false', 'ksview: capabilities must drop ALL', 'ksview: adds SYS_ADMIN']);
});

t.test('tls.type helm: a CA and a certificate for the names the WDS verifies, mounted by the pods', async (t) => {
  const objs = render(['server-values.yaml']);
  const secret = one(objs, 'Secret');
  const d = one(objs, 'Deployment');
  t.equal(secret.type, 'kubernetes.io/tls');
  t.equal(d.spec.template.spec.volumes.find((v: any) => v.name === 'serving-cert').secret.secretName, secret.metadata.name);
  const pem = (k: string) => Buffer.from(secret.data[k], 'base64').toString();
  const ca = new X509Certificate(pem('ca.crt'));
  const crt = new X509Certificate(pem('tls.crt'));
  t.ok(ca.ca, 'ca.crt is a CA');
  t.ok(crt.verify(ca.publicKey), 'tls.crt is signed by ca.crt');
  t.ok(crt.checkPrivateKey((await import('node:crypto')).createPrivateKey(pem('tls.key'))), 'tls.key is its key');
  for (const n of ['ksview.kubestellar-view.svc', 'ksview.kubestellar-view.svc.cluster.local', 'localhost', `${one(objs, 'Service').metadata.name}.kubestellar-view.svc`]) {
    t.equal(crt.checkHost(n), n, `names ${n}`);
  }
  t.ok(Date.parse(crt.validTo) > Date.now() + 365 * 24 * 3600_000, 'valid for years (the server wants more than 24 h)');
  t.match(d.spec.template.metadata.annotations['checksum/serving-cert'], /^[0-9a-f]{16}$/, 'a new certificate rolls the pods');
  // What a render can show of `lookup`: with no cluster (helm template) it finds nothing, so each
  // render makes a new CA. That the Secret of an installed release is found and kept is the
  // upgrade's, against a cluster (the end-to-end test).
  const again = one(render(['server-values.yaml']), 'Secret');
  t.not(again.data['ca.crt'], secret.data['ca.crt'], 'no cluster to look up: a new CA');
  const helpers = readFileSync(path.join(CHART, 'templates', '_helpers.tpl'), 'utf8');
  t.match(helpers, /lookup "v1" "Secret" \.Release\.Namespace \$name/, 'looks up the Secret it renders');
  t.match(helpers, /\$name := include "ksview\.server\.certSecret" \./, 'under the name it renders');
});

t.test('tls.type cert-manager: a Certificate writes the Secret the pods mount', async (t) => {
  const objs = render(['server-placement-values.yaml']);
  const cert = one(objs, 'Certificate');
  const d = one(objs, 'Deployment');
  t.equal(cert.apiVersion, 'cert-manager.io/v1');
  t.equal(d.spec.template.spec.volumes.find((v: any) => v.name === 'serving-cert').secret.secretName, cert.spec.secretName);
  t.same(cert.spec.issuerRef, { name: 'ksview-ca', kind: 'Issuer', group: 'cert-manager.io' });
  t.ok(cert.spec.dnsNames.includes('ksview.kubestellar-view.svc'));
  t.notOk(objs.some((o) => o.kind === 'Secret'), 'cert-manager writes the Secret, not the chart');
  const sm = one(objs, 'ServiceMonitor');
  t.equal(sm.spec.endpoints[0].scheme, 'https');
  t.same(sm.spec.endpoints[0].tlsConfig.ca.secret, { name: cert.spec.secretName, key: 'ca.crt' }, 'Prometheus verifies the server');
  t.notOk(sm.spec.endpoints[0].tlsConfig.insecureSkipVerify);
});

t.test('tls.type existingSecret: the pods mount the given Secret, the chart makes none', async (t) => {
  const objs = render(['server-existing-secret-values.yaml']);
  t.equal(one(objs, 'Deployment').spec.template.spec.volumes.find((v: any) => v.name === 'serving-cert').secret.secretName, 'ksview-serving-cert');
  t.notOk(objs.some((o) => o.kind === 'Secret' || o.kind === 'Certificate'));
});

t.test('a wrong value fails helm template (and install) with a message naming it', async (t) => {
  const cases: [string, string[], RegExp, string[]?][] = [
    ['replicas as a string', ['replicas=two'], /at '\/replicas': got string, want integer/, ['server-values.yaml']],
    ['an unknown tls.type', ['tls.type=openssl'], /at '\/tls\/type': value must be one of 'helm', 'cert-manager', 'existingSecret'/, ['server-values.yaml']],
    ['no WDS kubeconfig Secret with the server enabled', [], /at '\/wds\/kubeconfigSecret': minLength: got 0, want 1/],
    ['insecureSkipTLSVerify true', ['apiService.insecureSkipTLSVerify=true'], /at '\/apiService\/insecureSkipTLSVerify': value must be false/, ['server-values.yaml']],
    ['cert-manager without an issuer', ['tls.type=cert-manager'], /at '\/tls\/certManager\/issuerRef\/name': minLength/, ['server-values.yaml']],
    ['existingSecret without its name', ['tls.type=existingSecret'], /at '\/tls\/existingSecret': minLength/, ['server-values.yaml']],
    ['a pull agent without its cluster', ['agent.pull.cluster='], /at '\/agent\/pull\/cluster': minLength/, ['agent-pull-values.yaml']],
    ['a misspelt value', ['replica=3'], /at '': additional properties 'replica' not allowed/, ['server-values.yaml']],
    ['a default executor that is not namespace/name', ['defaultExecutor=default-executor'], /at '\/defaultExecutor': '.*' does not match pattern/, ['server-values.yaml']],
    ['a WDS name that is not a DNS label', ['wdsName=WDS_1'], /at '\/wdsName': '.*' does not match pattern/, ['server-values.yaml']],
  ];
  for (const [what, set, message, files] of cases) {
    const err = refused(set, files);
    t.match(err, /values don't meet the specifications of the schema/, what);
    t.match(err, message, what);
  }
});

t.test('the WDS part: the rules ksview serve --register grants (the same as the spaces), for the server\'s identity', async (t) => {
  const objs = render(['wds-values.yaml']);
  t.same(rulesOf(objs, 'ClusterRole', 'kubestellar-view:impersonator'), IMPERSONATOR_RULES);
  t.same(rulesOf(objs, 'ClusterRole', 'kubestellar-view:user'), VIEW_USER_RULES);
  t.same(rulesOf(objs, 'ClusterRole', 'kubestellar-view:crd-manager'), CRD_MANAGER_RULES);
  t.same(rulesOf(objs, 'ClusterRole', 'kubestellar-view:denatured-editor'), DENATURED_EDITOR_RULES);
  t.same(rulesOf(objs, 'ClusterRole', 'kubestellar-view:denatured-rbac-admin'), DENATURED_RBAC_ADMIN_RULES);
  t.same(rulesOf(objs, 'ClusterRole', 'kubestellar-view:escalation-checker'), ESCALATION_CHECKER_RULES);
  const auth = one(objs, 'ClusterRoleBinding', 'kubestellar-view:auth-delegator');
  t.equal(auth.roleRef.name, 'system:auth-delegator');
  t.equal(one(objs, 'RoleBinding', 'kubestellar-view:authentication-reader').metadata.namespace, 'kube-system');
  // Bound: the server's identity. Not bound: the roles an admin gives users.
  const bound = objs.filter((o) => o.kind.endsWith('Binding')).map((o) => o.roleRef.name);
  for (const r of ['kubestellar-view:user', 'kubestellar-view:denatured-editor', 'kubestellar-view:denatured-rbac-admin', 'kubestellar-view:metrics-reader']) {
    t.notOk(bound.includes(r), `${r} is bound to nobody`);
  }
  const sa = { kind: 'ServiceAccount', name: 'ksview', namespace: 'kubestellar-view' };
  for (const b of objs.filter((o) => o.kind.endsWith('Binding'))) t.same(b.subjects, [sa], `${b.metadata.name}: the server's ServiceAccount`);

  const user = render(['wds-values.yaml'], ['wds.subjects[0].kind=User', 'wds.subjects[0].apiGroup=rbac.authorization.k8s.io', 'wds.subjects[0].name=ksview-server']);
  for (const b of user.filter((o) => o.kind.endsWith('Binding'))) {
    t.same(b.subjects, [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'ksview-server' }], `${b.metadata.name}: the given identity`);
  }
  t.notOk(user.some((o) => o.kind === 'ServiceAccount'), 'no ServiceAccount when an identity is given');
  t.notOk(render(['wds-values.yaml'], ['wds.placement=false']).some((o) => o.metadata.name === 'kubestellar-view:placement'), 'placement rights only with placement');
});

t.test('the WDS part: hosted registration writes exactly the objects the server registers, by name', async (t) => {
  const objs = render(['wds-values.yaml']);
  const cluster = rulesOf(objs, 'ClusterRole', 'kubestellar-view:registration') as { resources: string[]; resourceNames?: string[]; verbs: string[] }[];
  const named = (resource: string) => cluster.filter((r) => r.resources.includes(resource) && r.resourceNames).flatMap((r) => r.resourceNames!);
  t.same(named('apiservices'), [`${VERSION}.${GROUP}`]);
  t.same(named('validatingwebhookconfigurations').sort(), [DENATURED_WEBHOOK_CONFIGURATION, POLICY_WEBHOOK_CONFIGURATION, WEBHOOK_CONFIGURATION].sort());
  for (const r of cluster) if (!r.resourceNames) t.same(r.verbs, ['create'], `${r.resources}: only create is unnamed (RBAC cannot name it)`);
  const role = one(objs, 'Role', 'kubestellar-view:registration');
  t.equal(role.metadata.namespace, 'kubestellar-view', 'the Service, its endpoints and the Lease: one namespace');
  for (const r of role.rules) {
    t.notOk(r.verbs.includes('list') || r.verbs.includes('watch') || r.resources.includes('secrets'), JSON.stringify(r));
    if (!r.resourceNames) t.same([r.resources, r.verbs], [['leases'], ['create']], 'only the Lease\'s first create is unnamed');
  }
  t.ok(role.rules.some((r: any) => r.resourceNames?.includes('kubestellar-view-placement-wds1')), 'the Lease of wdsName');
  t.notOk(objs.some((o) => (o.rules ?? []).some((r: any) => r.resources?.some((x: string) => /roles|rolebindings/.test(x)) && r.verbs.some((v: string) => ['create', 'bind', 'escalate', 'patch', 'update'].includes(v)) && o.metadata.name !== 'kubestellar-view:denatured-rbac-admin' && r.apiGroups.includes('rbac.authorization.k8s.io'))),
    'the server may not write RBAC in the WDS');
});

t.test('the ITS and agent parts render the files the local spaces bind their agents with', async (t) => {
  const strip = (o: any) => ({ kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace, rules: o.rules, roleRef: o.roleRef });
  const its = render(['its-values.yaml']);
  const spacesPull = renderRbac('agent/its-rbac.yaml', 'wec1').map(strip);
  for (const o of spacesPull) t.same(strip(its.find((x) => x.kind === o.kind && x.metadata.name === o.name && x.metadata.namespace === o.namespace)), o, `its part: ${o.kind} ${o.name}`);
  for (const o of pushMailboxRbac('wec2').map(strip)) t.same(strip(its.find((x) => x.kind === o.kind && x.metadata.name === o.name && x.metadata.namespace === o.namespace)), o, `its part: ${o.kind} ${o.name}`);
  t.same(one(its, 'RoleBinding', 'ksview-agent-push-kubeconfig').subjects, [{ kind: 'ServiceAccount', name: 'ksview-agent-push', namespace: 'ksview-agent' }]);
  // Each mailbox's quota on upsynced copies (the file the upsync test applies), none at 0.
  const quotas = its.filter((o) => o.kind === 'ResourceQuota');
  t.same(quotas.map((q) => `${q.metadata.namespace}/${q.metadata.name}`), ['wec1/kubestellar-view-mailbox', 'wec2/kubestellar-view-mailbox'], 'one per mailbox of pullClusters and pushClusters');
  for (const q of quotas) {
    t.same(q.spec, { hard: { 'count/upsyncedobjects.control.kubestellar.io': '500', 'count/workstatuses.control.kubestellar.io': '5000' } }, `${q.metadata.namespace}: the default bounds`);
  }
  const hard = (set: string[]) => render(['its-values.yaml'], set).filter((o) => o.kind === 'ResourceQuota').map((q) => q.spec.hard);
  t.same(hard(['its.mailboxQuota.upsyncedObjects=7', 'its.mailboxQuota.workStatuses=9']).map((h) => [h['count/upsyncedobjects.control.kubestellar.io'], h['count/workstatuses.control.kubestellar.io']]), [['7', '9'], ['7', '9']]);
  t.same(hard(['its.mailboxQuota.upsyncedObjects=0']), [{ 'count/workstatuses.control.kubestellar.io': '5000' }, { 'count/workstatuses.control.kubestellar.io': '5000' }], 'a kind at 0 is not counted');
  t.same(hard(['its.mailboxQuota.upsyncedObjects=0', 'its.mailboxQuota.workStatuses=0']), [], 'none with both at 0');
  t.match(refused(['its.mailboxQuota.upsyncedObjects=-1'], ['its-values.yaml']), /mailboxQuota\/upsyncedObjects/, 'a negative bound refused');
  t.match(refused(['its.mailboxQuota.workStatuses=-1'], ['its-values.yaml']), /mailboxQuota\/workStatuses/, 'a negative bound refused');
  const placementIts = one(its, 'ClusterRoleBinding', 'kubestellar-view:placement-its');
  t.same(placementIts.subjects, [{ kind: 'ServiceAccount', name: 'kubestellar-view-wds1', namespace: 'kubestellar-view' }], 'the server\'s ITS identity');

  const push = render(['agent-push-values.yaml'], [], 'ksview-agent');
  for (const o of renderRbac('agent/push-rbac.yaml').map(strip)) t.same(strip(one(push, o.kind, o.name)), o, `push part: ${o.kind} ${o.name}`);
  const pull = render(['agent-pull-values.yaml'], [], 'team-agents');
  for (const o of renderRbac('agent/pull-rbac.yaml').map(strip)) t.same(strip(one(pull, o.kind, o.name)), o, `pull part: ${o.kind} ${o.name}`);
  for (const b of pull.filter((o) => o.kind.endsWith('Binding') && o.metadata.name.startsWith('ksview-agent'))) {
    t.same(b.subjects, [{ kind: 'ServiceAccount', name: 'ksview-agent', namespace: 'team-agents' }], `${b.metadata.name}: the agent in the release namespace`);
  }
  const agent = one(pull, 'Deployment').spec.template.spec.containers[0];
  t.ok(agent.args.includes('--cluster=wec1'));
  t.ok(one(pull, 'ServiceAccount', 'default-executor'), 'the WEC executors');
});

t.test('every Role and ClusterRole the chart ships says why, in a comment', async (t) => {
  const dir = path.join(CHART, 'files');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml'));
  t.ok(files.length >= 10);
  for (const f of files) {
    const docs = readFileSync(path.join(dir, f), 'utf8').split(/^---$/m);
    for (const doc of docs) {
      const obj = YAML.parse(doc) as Obj | null;
      if (!obj || !['Role', 'ClusterRole'].includes(obj.kind)) continue;
      t.match(doc, /^\s*#/m, `${f}: ${obj.kind} ${obj.metadata.name} is commented`);
    }
  }
});

t.test('the chart\'s flags are flags of ksview serve and ksview agent', async (t) => {
  const help = (cmd: string) => spawnSync(process.execPath, [path.join(repoRoot(), 'bin', 'ksview.js'), cmd, '--help'], { encoding: 'utf8' }).stdout;
  const known = { serve: help('serve'), agent: help('agent') };
  for (const f of ['server-placement-values.yaml', 'agent-pull-values.yaml', 'agent-push-values.yaml']) {
    for (const d of render([f]).filter((o) => o.kind === 'Deployment')) {
      const args = d.spec.template.spec.containers[0].args as string[];
      const cmd = args[0] as 'serve' | 'agent';
      for (const a of args.slice(1)) t.ok(known[cmd].includes(`${a.split('=')[0]} `) || known[cmd].includes(`${a.split('=')[0]}\n`), `${cmd} ${a.split('=')[0]}`);
    }
  }
});

/** A values file of these values (YAML.stringify keeps newlines as data), for render/refused. */
const scratch = mkdtempSync(path.join(os.tmpdir(), 'ksview-chart-values-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
let scratchN = 0;
function valuesFile(values: Record<string, unknown>): string {
  const f = path.join(scratch, `values-${scratchN++}.yaml`);
  writeFileSync(f, YAML.stringify(values));
  return f;
}

t.test('agent.pull in another namespace: the agents\' namespace is the release namespace everywhere, the executors\' policy protecting it', async (t) => {
  const raw = run(['template', 'ksview', '.', '--namespace', 'team-agents', '-f', path.join(CI, 'agent-pull-values.yaml')]);
  t.equal(raw.status, 0, raw.stderr);
  t.notMatch(raw.stdout, /'ksview-agent'|namespace: ksview-agent\b/, 'no file keeps the literal agents\' namespace');
  const pull = YAML.parseAllDocuments(raw.stdout).map((d) => d.toJSON() as Obj).filter(Boolean);
  const vap = one(pull, 'ValidatingAdmissionPolicy', 'kubestellar-view-default-executor-namespaces');
  const protectedNs = (vap.spec.variables as { name: string; expression: string }[]).find((v) => v.name === 'protected')!.expression;
  t.match(protectedNs, /'team-agents'/, 'the default executor may not write where the agent (WEC cluster-admin, its ITS kubeconfig) lives');
  for (const ns of ['kube-system', 'kubestellar-view-executors']) t.match(protectedNs, new RegExp(`'${ns}'`), ns);
  t.equal(one(pull, 'ServiceAccount', 'ksview-agent').metadata.namespace, 'team-agents');
  t.equal(one(pull, 'Deployment', 'ksview-agent').metadata.namespace, 'team-agents');
});

t.test('agent.pull: the default executor is bound in the namespaces listed only; cluster-wide only when asked, from the spaces\' own file', async (t) => {
  const isDefault = (o: Obj) => o.kind.endsWith('Binding') && o.roleRef?.name === 'kubestellar-view:default-executor';
  const subject = [{ kind: 'ServiceAccount', name: 'default-executor', namespace: 'kubestellar-view-executors' }];
  const plain = render(['agent-pull-values.yaml'], [], 'team-agents');
  t.same(plain.filter(isDefault), [], 'by default: bound nowhere (no cluster-wide Pods, Secrets, Namespaces in a real WEC)');
  t.ok(one(plain, 'ClusterRole', 'kubestellar-view:default-executor'), 'its rules are shipped, to bind');
  t.ok(one(plain, 'ServiceAccount', 'default-executor'));

  const teams = render(['agent-pull-values.yaml'], ['agent.pull.executors.defaultExecutorNamespaces={team-a,team-b}'], 'team-agents');
  const rbs = teams.filter(isDefault);
  t.same(rbs.map((o) => [o.kind, o.metadata.namespace]).sort(), [['RoleBinding', 'team-a'], ['RoleBinding', 'team-b']]);
  for (const rb of rbs) {
    t.same(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubestellar-view:default-executor' });
    t.same(rb.subjects, subject);
  }

  const wide = render(['agent-pull-values.yaml'], ['agent.pull.executors.defaultExecutorClusterWide=true'], 'team-agents');
  const crb = one(wide.filter(isDefault), 'ClusterRoleBinding', 'kubestellar-view:default-executor');
  t.same(crb.subjects, subject);
  const spaces = YAML.parseAllDocuments(readFileSync(chartFile('agent/wec-default-executor-cluster-wide.yaml'), 'utf8')).map((d) => d.toJSON() as Obj).filter(Boolean);
  t.same(spaces.map((o) => [o.kind, o.metadata.name, o.roleRef, o.subjects]), [[crb.kind, crb.metadata.name, crb.roleRef, crb.subjects]],
    'the cluster-wide binding is the file the local spaces apply (one copy)');
  const executors = YAML.parseAllDocuments(readFileSync(chartFile('agent/wec-executors.yaml'), 'utf8')).map((d) => d.toJSON() as Obj).filter(Boolean);
  t.notOk(executors.some(isDefault), 'wec-executors.yaml binds the default executor nowhere');

  t.match(refused(['agent.pull.executors.defaultExecutorNamespaces={Team_A}'], ['agent-pull-values.yaml']),
    /at '\/agent\/pull\/executors\/defaultExecutorNamespaces\/0': '.*' does not match pattern/);
});

t.test('the executors\' policy: the default executor may not set or change a Pod Security label of a Namespace', async (t) => {
  const vap = one(render(['agent-pull-values.yaml'], [], 'team-agents'), 'ValidatingAdmissionPolicy', 'kubestellar-view-default-executor-namespaces');
  const v = (vap.spec.validations as { expression: string; messageExpression?: string }[]).find((x) => /variables\.newPodSecurity/.test(x.expression));
  t.ok(v, 'a validation comparing the Pod Security labels written with those replaced');
  t.match(v?.messageExpression ?? '', /may not set or change the Pod Security labels/);
  const vars = Object.fromEntries((vap.spec.variables as { name: string; expression: string }[]).map((x) => [x.name, x.expression]));
  for (const n of ['newPodSecurity', 'oldPodSecurity']) t.match(vars[n], /startsWith\('pod-security\.kubernetes\.io\/'\)/, `${n}: the pod-security.kubernetes.io/ labels`);
  t.same(vap.spec.matchConstraints.resourceRules[0].operations.slice().sort(), ['CREATE', 'DELETE', 'UPDATE']);
  // Its effect is checked on a real kube-apiserver: test/integration/executor.test.ts.
});

t.test('the WDS part: no non-expiring token Secret unless asked', async (t) => {
  const objs = render(['wds-values.yaml']);
  t.notOk(objs.some((o) => o.kind === 'Secret'), 'no legacy ServiceAccount token Secret by default');
  t.equal(one(objs, 'ServiceAccount', 'ksview').metadata.namespace, 'kubestellar-view', 'the ServiceAccount, for short-lived tokens (TokenRequest)');
  const legacy = render(['wds-values.yaml'], ['wds.serviceAccount.legacyTokenSecret=true']);
  const secret = one(legacy, 'Secret', 'ksview-token');
  t.equal(secret.type, 'kubernetes.io/service-account-token');
  t.equal(secret.metadata.annotations?.['kubernetes.io/service-account.name'], 'ksview');
});

t.test('values that could inject YAML: refused by the schema naming them; past the schema, rendered as data', async (t) => {
  const hostile = 'x\nhostNetwork: true';
  const subjectNs = 'x\n- kind: Group\n  apiGroup: rbac.authorization.k8s.io\n  name: system:authenticated';
  // [what, base file, values, schema path, where the value lands in the render]
  type Case = [string, string, Record<string, unknown>, string, (objs: Obj[]) => unknown];
  const dep = (objs: Obj[]) => one(objs, 'Deployment').spec.template.spec;
  const vol = (name: string) => (objs: Obj[]) => dep(objs).volumes.find((v: any) => v.name === name).secret.items[0].key;
  const cert = (objs: Obj[]) => one(objs, 'Certificate').spec;
  const sm = (objs: Obj[]) => one(objs, 'ServiceMonitor').spec.endpoints[0];
  const cases: Case[] = [
    ['priorityClassName', 'server-values.yaml', { priorityClassName: hostile }, '/priorityClassName', (o) => dep(o).priorityClassName],
    ['image.repository', 'server-values.yaml', { image: { repository: hostile } }, '/image/repository', (o) => dep(o).containers[0].image],
    ['image.tag', 'server-values.yaml', { image: { tag: hostile } }, '/image/tag', (o) => dep(o).containers[0].image],
    ['wds.kubeconfigSecretKey', 'server-values.yaml', { wds: { kubeconfigSecretKey: hostile } }, '/wds/kubeconfigSecretKey', vol('wds-kubeconfig')],
    ['its.kubeconfigSecretKey', 'server-placement-values.yaml', { its: { kubeconfigSecretKey: hostile } }, '/its/kubeconfigSecretKey', vol('its-kubeconfig')],
    ['issuerRef.name', 'server-placement-values.yaml', { tls: { certManager: { issuerRef: { name: hostile } } } }, '/tls/certManager/issuerRef/name', (o) => cert(o).issuerRef.name],
    ['issuerRef.kind', 'server-placement-values.yaml', { tls: { certManager: { issuerRef: { kind: hostile } } } }, '/tls/certManager/issuerRef/kind', (o) => cert(o).issuerRef.kind],
    ['issuerRef.group', 'server-placement-values.yaml', { tls: { certManager: { issuerRef: { group: hostile } } } }, '/tls/certManager/issuerRef/group', (o) => cert(o).issuerRef.group],
    ['duration', 'server-placement-values.yaml', { tls: { certManager: { duration: hostile } } }, '/tls/certManager/duration', (o) => cert(o).duration],
    ['renewBefore', 'server-placement-values.yaml', { tls: { certManager: { renewBefore: hostile } } }, '/tls/certManager/renewBefore', (o) => cert(o).renewBefore],
    ['interval', 'server-placement-values.yaml', { metrics: { serviceMonitor: { interval: hostile } } }, '/metrics/serviceMonitor/interval', (o) => sm(o).interval],
    ['bearerTokenSecret.name', 'server-placement-values.yaml', { metrics: { serviceMonitor: { bearerTokenSecret: { name: hostile } } } }, '/metrics/serviceMonitor/bearerTokenSecret/name', (o) => sm(o).authorization.credentials.name],
    ['bearerTokenSecret.key', 'server-placement-values.yaml', { metrics: { serviceMonitor: { bearerTokenSecret: { name: 'prom', key: hostile } } } }, '/metrics/serviceMonitor/bearerTokenSecret/key', (o) => sm(o).authorization.credentials.key],
    ['server.podDisruptionBudget.minAvailable', 'server-values.yaml', { server: { podDisruptionBudget: { minAvailable: hostile } } }, '/server/podDisruptionBudget/minAvailable', (o) => one(o, 'PodDisruptionBudget').spec.minAvailable],
    ['fullnameOverride', 'server-values.yaml', { fullnameOverride: hostile }, '/fullnameOverride', (o) => one(o, 'Deployment').metadata.name],
    ['wds.subjects[].namespace', 'wds-values.yaml', { wds: { subjects: [{ kind: 'ServiceAccount', name: 'ksview', namespace: subjectNs }] } }, '/wds/subjects/0/namespace',
      (o) => one(o, 'ClusterRoleBinding', 'kubestellar-view:impersonator').subjects],
    ['its.subjects[].namespace', 'its-values.yaml', { its: { subjects: [{ kind: 'ServiceAccount', name: 'ksview', namespace: subjectNs }] } }, '/its/subjects/0/namespace',
      (o) => one(o, 'ClusterRoleBinding', 'kubestellar-view:placement-its').subjects],
  ];
  for (const [what, base, values, at, landed] of cases) {
    const f = valuesFile(values);
    const err = refused([], [base, f]);
    t.match(err, /values don't meet the specifications of the schema/, `${what}: refused`);
    t.match(err, new RegExp(`at '${at.replace(/[/[\]]/g, '\\$&')}'`), `${what}: the message names ${at}`);
    // Past the schema (helm --skip-schema-validation), the value is data where it lands, nothing more.
    const objs = render([base, f], [], 'kubestellar-view', ['--skip-schema-validation']);
    const got = landed(objs);
    if (what.includes('subjects')) {
      t.same(got, [{ kind: 'ServiceAccount', name: 'ksview', namespace: subjectNs }], `${what}: one subject, its namespace as given`);
      t.notMatch(JSON.stringify(objs), /"name":"system:authenticated"/, `${what}: no subject added`);
    } else {
      t.match(String(got), hostile, `${what}: rendered as one string`);
      t.notOk(objs.some((o) => JSON.stringify(o).includes('"hostNetwork":true')), `${what}: no field injected`);
    }
  }
  // The subject kinds and API groups RBAC knows, and nothing else.
  t.match(refused([], ['wds-values.yaml', valuesFile({ wds: { subjects: [{ kind: 'User', apiGroup: 'evil.example', name: 'u' }] } })]), /at '\/wds\/subjects\/0\/apiGroup'/);
  t.match(refused([], ['server-values.yaml', valuesFile({ nameOverride: 'Bad Name' })]), /at '\/nameOverride'/);
  // Valid values still render: a registry with a port, a tag, durations, a ClusterIssuer.
  const ok = render(['server-placement-values.yaml', valuesFile({ image: { repository: 'registry.example:5000/team/ksview', tag: 'v1.2.3-rc.1' }, priorityClassName: 'system-cluster-critical',
    tls: { certManager: { issuerRef: { name: 'ksview-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' }, duration: '1h30m', renewBefore: '720h' } },
    metrics: { serviceMonitor: { interval: '1m', bearerTokenSecret: { name: 'prom-token', key: 'token' } } } })]);
  t.equal(dep(ok).containers[0].image, 'registry.example:5000/team/ksview:v1.2.3-rc.1');
  t.equal(cert(ok).duration, '1h30m');
  t.equal(cert(ok).issuerRef.kind, 'ClusterIssuer');
});
