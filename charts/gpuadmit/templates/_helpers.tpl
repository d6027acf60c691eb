{{/* Names: the standard helpers, truncated to 63 characters (DNS label limit). */}}
{{- define "gpuadmit.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpuadmit.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "gpuadmit.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpuadmit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpuadmit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gpuadmit.labels" -}}
helm.sh/chart: {{ include "gpuadmit.chart" . }}
{{ include "gpuadmit.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gpuadmit
{{- end -}}

{{- define "gpuadmit.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gpuadmit.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret the server reads its serving certificate from (tls.crt, tls.key). */}}
{{- define "gpuadmit.tlsSecretName" -}}
{{- if .Values.certificates.existingSecret.name -}}
{{- .Values.certificates.existingSecret.name -}}
{{- else -}}
{{- printf "%s-tls" (include "gpuadmit.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "gpuadmit.policyConfigMapName" -}}
{{- if .Values.policy.existingConfigMap -}}
{{- .Values.policy.existingConfigMap -}}
{{- else -}}
{{- printf "%s-policy" (include "gpuadmit.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
Webhook names, also the names of the two configuration objects. The default release "gpuadmit" gets
mutate.gpuadmit.io / validate.gpuadmit.io (what kubectl prints in "admission webhook ... denied the
request"); any other release gets mutate.<fullname>.gpuadmit.io so two releases never collide.
*/}}
{{- define "gpuadmit.webhookName" -}}
{{- $full := include "gpuadmit.fullname" .root -}}
{{- if eq $full "gpuadmit" -}}
{{- printf "%s.gpuadmit.io" .kind -}}
{{- else -}}
{{- printf "%s.%s.gpuadmit.io" .kind $full | trunc 253 -}}
{{- end -}}
{{- end -}}

{{/* A webhook's clientConfig (dict "root" $ "kind" "mutate"|"validate" "caBundle" BASE64-or-""). */}}
{{- define "gpuadmit.webhookClientConfig" -}}
clientConfig:
  {{- if .root.Values.webhooks.url }}
  # Development/testing only: the API server calls this URL instead of the Service.
  url: {{ printf "%s/%s" (trimSuffix "/" .root.Values.webhooks.url) .kind | quote }}
  {{- else }}
  service:
    name: {{ include "gpuadmit.fullname" .root }}
    namespace: {{ .root.Release.Namespace }}
    path: /{{ .kind }}
    port: {{ .root.Values.service.port }}
  {{- end }}
  {{- if .caBundle }}
  caBundle: {{ .caBundle | quote }}
  {{- end }}
{{- end -}}

{{- define "gpuadmit.serviceHost" -}}
{{- printf "%s.%s.svc" (include "gpuadmit.fullname" .) .Release.Namespace -}}
{{- end -}}

{{- define "gpuadmit.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The certificate source actually in use: helm, certManager or existingSecret. */}}
{{- define "gpuadmit.certSource" -}}
{{- if .Values.certificates.certManager.enabled -}}certManager
{{- else if .Values.certificates.existingSecret.name -}}existingSecret
{{- else -}}helm
{{- end -}}
{{- end -}}

{{/*
certificates.helm's renewal values, with the chart's defaults where they are missing: `helm upgrade
--reuse-values` from a chart that had none of them keeps that chart's values and defaults.
"gpuadmit.renewing": "true" when the server renews the Helm-generated certificate (renew.enabled), else "".
*/}}
{{- define "gpuadmit.renewing" -}}
{{- if and (eq (include "gpuadmit.certSource" .) "helm") (dig "renew" "enabled" true .Values.certificates.helm) -}}true{{- end -}}
{{- end -}}

{{- define "gpuadmit.renewBefore" -}}
{{- dig "renew" "before" "720h" .Values.certificates.helm -}}
{{- end -}}

{{- define "gpuadmit.caValidityDays" -}}
{{- .Values.certificates.helm.caValidityDays | default 3650 | int -}}
{{- end -}}

{{/*
matchConditions (CEL, evaluated by the API server): an object is sent to gpuadmit only when something in
it is GPU-related, so that a gpuadmit outage under failurePolicy Fail blocks nothing else:
- a pod, when a container asks for a GPU resource or runs a GPU image, or it tolerates a GPU taint, or
  carries a GPU label or a gpuadmit.io/ annotation;
- a workload (webhooks.workloads), when its pod template (each entry's `template` path, the policy's) is
  such a pod;
- a claim, when it carries a gpuadmit.io/ label or annotation (checkpoint-pvc's marker).
Every list comes from webhooks.matchConditions and must cover what the policy looks at (gpuResources,
gpu-intent imagePatterns and labels, stray-gpu-toleration taintKeys, checkpoint-pvc's marker): the chart
test checks them against the default policy. Guards (has, != null) on every optional field: a CEL error
counts as a webhook failure and failurePolicy applies.
*/}}
{{- /* gpuadmit.gpuPodCEL (dict "m" matchConditions "v" VAR): VAR (a pod, or a pod template) is GPU-related.
has(x) is true for a field present as null (a pod without containers arrives with "containers": null),
and iterating null is an error: hence `has(x) && x != null` on every list and map. */ -}}
{{- define "gpuadmit.gpuPodCEL" -}}
{{- $m := .m -}}{{- $v := .v -}}
{{- $res := printf "%s.exists(p, r.startsWith(p))" (toJson $m.resourcePrefixes) -}}
{{- $gpuContainer := printf "(has(c.resources) && ((has(c.resources.limits) && c.resources.limits != null && c.resources.limits.exists(r, %s)) || (has(c.resources.requests) && c.resources.requests != null && c.resources.requests.exists(r, %s)))) || (has(c.image) && %s.exists(s, c.image.contains(s)))" $res $res (toJson $m.imageSubstrings) -}}
(has({{ $v }}.spec) && {{ $v }}.spec != null && (
(has({{ $v }}.spec.containers) && {{ $v }}.spec.containers != null && {{ $v }}.spec.containers.exists(c, {{ $gpuContainer }})) ||
(has({{ $v }}.spec.initContainers) && {{ $v }}.spec.initContainers != null && {{ $v }}.spec.initContainers.exists(c, {{ $gpuContainer }})) ||
(has({{ $v }}.spec.tolerations) && {{ $v }}.spec.tolerations != null && {{ $v }}.spec.tolerations.exists(t, has(t.key) && t.key in {{ toJson $m.tolerationKeys }})))) ||
(has({{ $v }}.metadata) && {{ $v }}.metadata != null && (
(has({{ $v }}.metadata.labels) && {{ $v }}.metadata.labels != null && {{ toJson $m.labelKeys }}.exists(k, k in {{ $v }}.metadata.labels)) ||
(has({{ $v }}.metadata.annotations) && {{ $v }}.metadata.annotations != null && {{ $v }}.metadata.annotations.exists(k, {{ toJson $m.annotationPrefixes }}.exists(p, k.startsWith(p))))))
{{- end -}}

{{- /* gpuadmit.templateCEL (dict "path" "spec.*ReplicaSpecs.*.template" "pod" CEL-over-pt): some pod template
at the dotted path of `object` (bound to `pt`) satisfies the pod expression. A * segment matches map keys (alone: any key;
*suffix or prefix*), as in the policy's spec.workloads. */ -}}
{{- define "gpuadmit.templateCEL" -}}
{{- $base := "object" -}}{{- $open := "" -}}{{- $close := "" -}}
{{- range $i, $seg := splitList "." .path -}}
{{- if contains "*" $seg -}}
{{- $k := printf "k%d" $i -}}
{{- $match := "true" -}}
{{- if and (hasPrefix "*" $seg) (gt (len $seg) 1) -}}{{- $match = printf "%s.endsWith(%s)" $k (trimPrefix "*" $seg | quote) -}}
{{- else if and (hasSuffix "*" $seg) (gt (len $seg) 1) -}}{{- $match = printf "%s.startsWith(%s)" $k (trimSuffix "*" $seg | quote) -}}
{{- else if ne $seg "*" -}}{{- fail (printf "webhooks.workloads template %q: a * segment is *, *suffix or prefix*" $.path) -}}
{{- end -}}
{{- $open = printf "%s%s.exists(%s, %s && %s[%s] != null && " $open $base $k $match $base $k -}}
{{- $close = printf "%s)" $close -}}
{{- $base = printf "%s[%s]" $base $k -}}
{{- else -}}
{{- $open = printf "%shas(%s.%s) && %s.%s != null && " $open $base $seg $base $seg -}}
{{- $base = printf "%s.%s" $base $seg -}}
{{- end -}}
{{- end -}}
{{- printf "(%s[%s].exists(pt, %s)%s)" $open $base .pod $close -}}
{{- end -}}

{{- define "gpuadmit.matchConditions" -}}
{{- $m := .Values.webhooks.matchConditions -}}
- name: gpu-related-pods-only
  expression: >-
    request.resource.resource != "pods" || {{ include "gpuadmit.gpuPodCEL" (dict "m" $m "v" "object") | replace "\n" " " }}
- name: marked-claims-only
  expression: >-
    request.resource.resource != "persistentvolumeclaims" ||
    (has(object.metadata.labels) && object.metadata.labels != null && object.metadata.labels.exists(k, {{ toJson $m.annotationPrefixes }}.exists(p, k.startsWith(p)))) ||
    (has(object.metadata.annotations) && object.metadata.annotations != null && object.metadata.annotations.exists(k, {{ toJson $m.annotationPrefixes }}.exists(p, k.startsWith(p))))
{{- $pod := include "gpuadmit.gpuPodCEL" (dict "m" $m "v" "pt") | replace "\n" " " }}
{{- range $i, $w := .Values.webhooks.workloads }}
- name: gpu-related-templates-{{ $i }}
  expression: >-
    !(request.resource.group == {{ $w.apiGroup | quote }} && request.resource.resource in {{ toJson $w.resources }}) ||
    {{ include "gpuadmit.templateCEL" (dict "path" ($w.template | default "spec.template") "pod" $pod) }}
{{- end }}
{{- end -}}

{{/* Pods the priority-class quota allows: the value, or twice the replicas (a rollout's surge pod, and
pods evicted or being replaced, count until they are gone). */}}
{{- define "gpuadmit.priorityClassQuotaPods" -}}
{{- .Values.priorityClassQuota.pods | default (mul (int .Values.replicas) 2) -}}
{{- end }}

{{/* The policy of policy.preset: the chart's default policy, or one of the example policies (the files under
files/policies are deploy/policies', byte for byte; the chart test checks it). */}}
{{- define "gpuadmit.presetPolicy" -}}
{{- $files := dict "default" "files/default-policy.yaml" "warn-only" "files/policies/warn-only-rollout.yaml" "strict" "files/policies/strict.yaml" "kubeflow" "files/policies/kubeflow.yaml" -}}
{{- $file := required (printf "policy.preset %q is not one of default, warn-only, strict, kubeflow" .Values.policy.preset) (get $files .Values.policy.preset) -}}
{{- .Files.Get $file -}}
{{- end -}}

{{/* Where the client CA comes from (clientAuth): "ConfigMap/<name>" or "Secret/<name>" (the chart's own ConfigMap
for caBundle). */}}
{{- define "gpuadmit.clientCASource" -}}
{{- if .Values.clientAuth.existingSecret -}}
Secret/{{ .Values.clientAuth.existingSecret }}
{{- else if .Values.clientAuth.existingConfigMap -}}
ConfigMap/{{ .Values.clientAuth.existingConfigMap }}
{{- else -}}
ConfigMap/{{ include "gpuadmit.fullname" . }}-client-ca
{{- end -}}
{{- end -}}

{{/* The user name kube-apiserver's admission kubeconfig must give the client certificate under, so that it
is presented to this release's webhooks: the URL's host[:port] (webhooks.url), or the Service's DNS name with
":port" unless the port is 443 (https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#authenticate-apiservers). */}}
{{- define "gpuadmit.admissionKubeconfigUser" -}}
{{- if .Values.webhooks.url -}}
{{- (urlParse .Values.webhooks.url).host -}}
{{- else if eq (int .Values.service.port) 443 -}}
{{- include "gpuadmit.serviceHost" . -}}
{{- else -}}
{{- printf "%s:%d" (include "gpuadmit.serviceHost" .) (int .Values.service.port) -}}
{{- end -}}
{{- end -}}
