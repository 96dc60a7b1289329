{{/*
Names, labels and the shared pieces of the parts. Every object carries the chart's standard labels;
the server's pods are selected by name + component only (selectors never change across upgrades).
*/}}

{{- define "ksview.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ksview.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kubestellar-view
{{- end -}}

{{/* The server's pods: the Service, the PodDisruptionBudget and the topology spread select these. */}}
{{- define "ksview.server.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: apiserver
{{- end -}}

{{- define "ksview.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The serving certificate's Secret (ca.crt, tls.crt, tls.key) for each tls.type. */}}
{{- define "ksview.server.certSecret" -}}
{{- if eq .Values.tls.type "existingSecret" -}}
{{- .Values.tls.existingSecret -}}
{{- else -}}
{{- printf "%s-serving-cert" (include "ksview.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
The names the serving certificate carries. The WDS's aggregator and webhook callers verify
<service>.<namespace>.svc of the Service the server registers in the WDS (kubestellar-view/ksview,
the names `ksview serve --namespace/--service` checks at start); the hosting cluster's own Service
names serve in-cluster clients there (a ServiceMonitor); localhost, which the server also checks
when it does not register hosted (apiService.create false).
*/}}
{{- define "ksview.server.dnsNames" -}}
{{- $host := include "ksview.fullname" . -}}
- ksview.kubestellar-view.svc
- ksview.kubestellar-view.svc.cluster.local
- {{ printf "%s.%s.svc" $host .Release.Namespace | quote }}
- {{ printf "%s.%s.svc.cluster.local" $host .Release.Namespace | quote }}
- localhost
{{- end -}}

{{/*
A shipped file under files/ rendered as it is, comments included (the local spaces read the same
files: one source for every rule). `replace` is a map of literal text to its replacement:
CLUSTER_NAME, and the default subjects of the bindings.
*/}}
{{- define "ksview.file" -}}
{{- $text := .root.Files.Get .file -}}
{{- if not $text -}}{{- fail (printf "chart file %s is missing" .file) -}}{{- end -}}
{{- range $old, $new := .replace -}}
{{- $text = replace $old $new $text -}}
{{- end -}}
{{ $text }}
{{- end -}}

{{/* Subjects as the YAML list a binding holds (one indent level: as written in files/); every value quoted. */}}
{{- define "ksview.subjects" -}}
{{- range $i, $s := . -}}
{{- if $i }}{{ "\n" }}{{ end -}}
- kind: {{ $s.kind | quote }}
  {{- if $s.apiGroup }}
  apiGroup: {{ $s.apiGroup | quote }}
  {{- end }}
  name: {{ $s.name | quote }}
  {{- if $s.namespace }}
  namespace: {{ $s.namespace | quote }}
  {{- end }}
{{- end -}}
{{- end -}}

{{/* The pod-level scheduling values shared by every Deployment of the chart. */}}
{{- define "ksview.scheduling" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
tls.type helm: the serving certificate as JSON {ca, crt, key} (PEM; JSON, not YAML: lossless, so the
checksum of a made certificate and of the same one looked up are equal). An existing Secret of this
release is kept (lookup: across `helm upgrade`, so the CA the server registered in the WDS stays
valid and the pods do not roll); otherwise a new CA and certificate are made (genCA,
genSignedCert). Made once per render and cached in the values, so the Secret and the pods'
checksum annotation see the same certificate. `helm template` and `--dry-run=client` cannot look
up: they make a new one every time.
*/}}
{{- define "ksview.server.helmCert" -}}
{{- if not (hasKey .Values.tls "_generated") -}}
{{- $name := include "ksview.server.certSecret" . -}}
{{- $old := lookup "v1" "Secret" .Release.Namespace $name -}}
{{- $cert := dict -}}
{{- if and $old $old.data (index $old.data "ca.crt") (index $old.data "tls.crt") (index $old.data "tls.key") -}}
{{- $_ := set $cert "ca" (index $old.data "ca.crt" | b64dec) -}}
{{- $_ := set $cert "crt" (index $old.data "tls.crt" | b64dec) -}}
{{- $_ := set $cert "key" (index $old.data "tls.key" | b64dec) -}}
{{- else -}}
{{- $days := int .Values.tls.helm.certDurationDays -}}
{{- $ca := genCA "kubestellar-view-serving-ca" $days -}}
{{- $names := include "ksview.server.dnsNames" . | fromYamlArray -}}
{{- $leaf := genSignedCert "ksview.kubestellar-view.svc" nil $names $days $ca -}}
{{- $_ := set $cert "ca" $ca.Cert -}}
{{- $_ := set $cert "crt" $leaf.Cert -}}
{{- $_ := set $cert "key" $leaf.Key -}}
{{- end -}}
{{- $_ := set .Values.tls "_generated" $cert -}}
{{- end -}}
{{- toJson .Values.tls._generated -}}
{{- end -}}

{{/* The literal default subject of files/wds/*.yaml, replaced by the server's WDS identity. */}}
{{- define "ksview.wds.fileSubject" -}}
- kind: ServiceAccount
  name: ksview
  namespace: kubestellar-view
{{- end -}}

{{- define "ksview.wds.subjects" -}}
{{- if .Values.wds.subjects -}}
{{- include "ksview.subjects" .Values.wds.subjects -}}
{{- else -}}
{{- include "ksview.wds.fileSubject" . -}}
{{- end -}}
{{- end -}}

{{/* The literal default subject of files/its/rbac.yaml, replaced by the server's ITS identity. */}}
{{- define "ksview.its.fileSubject" -}}
- kind: User
  name: kubestellar-view-wds1
{{- end -}}

{{- define "ksview.its.serviceAccount" -}}
{{- printf "kubestellar-view-%s" .Values.wdsName -}}
{{- end -}}

{{- define "ksview.its.subjects" -}}
{{- if .Values.its.subjects -}}
{{- include "ksview.subjects" .Values.its.subjects -}}
{{- else -}}
{{- include "ksview.subjects" (list (dict "kind" "ServiceAccount" "name" (include "ksview.its.serviceAccount" .) "namespace" .Release.Namespace)) -}}
{{- end -}}
{{- end -}}

{{/*
The `ingress` of a NetworkPolicy: one rule per non-empty list of peers (NetworkPolicyPeers, as
JSON), each to the pods' HTTPS port. No rule for an empty list: a rule with no `from` admits every
source; with no rule at all, `ingress: []` admits none.
*/}}
{{- define "ksview.networkPolicy.ingress" -}}
{{- $rules := list -}}
{{- range . -}}
{{- if . -}}
{{- $rules = append $rules (dict "from" . "ports" (list (dict "port" "https" "protocol" "TCP"))) -}}
{{- end -}}
{{- end -}}
ingress: {{ toJson $rules }}
{{- end -}}
