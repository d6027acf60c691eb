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

{{- define "gpuadmit.serviceHost" -}}
{{- printf "%s.%s.svc" (include "gpuadmit.fullname" .) .Release.Namespace -}}
{{- end -}}

{{- define "gpuadmit.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The certificate source actually in use: helm, certManager or existingSecret. */}}
{{- define "gpuadmit.certSource" -}}
{{- if .Values.certificates.certManager.enabled -}}certManager
{{- else if .Values.certificates.existingSecret.name -}}existingSecret
{{- else -}}helm
{{- end -}}
{{- end -}}

{{/*
matchConditions (CEL, evaluated by the API server): a pod is sent to gpuadmit only when something in
it is GPU-related; claims and workloads are always sent (few, and their templates are checked by
gpuadmit itself). Every list comes from webhooks.matchConditions and must cover what the policy looks
at (gpuResources, gpu-intent imagePatterns and labels, stray-gpu-toleration taintKeys), or pods that
the policy would fix are never shown to it. Guards (has) on every optional field: a CEL error counts
as a webhook failure and failurePolicy applies.
*/}}
{{- define "gpuadmit.matchConditions" -}}
{{- $m := .Values.webhooks.matchConditions -}}
{{- $res := printf "%s.exists(p, r.startsWith(p))" (toJson $m.resourcePrefixes) -}}
{{- /* has(x) is true for a field present as null (a pod without containers arrives with "containers": null),
and iterating null is an error: hence `has(x) && x != null` on every list and map. */ -}}
{{- $gpuContainer := printf "(has(c.resources) && ((has(c.resources.limits) && c.resources.limits != null && c.resources.limits.exists(r, %s)) || (has(c.resources.requests) && c.resources.requests != null && c.resources.requests.exists(r, %s)))) || (has(c.image) && %s.exists(s, c.image.contains(s)))" $res $res (toJson $m.imageSubstrings) -}}
- name: gpu-related-pods-only
  expression: >-
    request.resource.resource != "pods" || (has(object.spec) && (
    (has(object.spec.containers) && object.spec.containers != null && object.spec.containers.exists(c, {{ $gpuContainer }})) ||
    (has(object.spec.initContainers) && object.spec.initContainers != null && object.spec.initContainers.exists(c, {{ $gpuContainer }})) ||
    (has(object.spec.tolerations) && object.spec.tolerations != null && object.spec.tolerations.exists(t, has(t.key) && t.key in {{ toJson $m.tolerationKeys }})) ||
    (has(object.metadata.labels) && object.metadata.labels != null && {{ toJson $m.labelKeys }}.exists(k, k in object.metadata.labels)) ||
    (has(object.metadata.annotations) && object.metadata.annotations != null && object.metadata.annotations.exists(k, {{ toJson $m.annotationPrefixes }}.exists(p, k.startsWith(p))))))
{{- end -}}

{{/* Pods the priority-class quota allows: the value, or twice the replicas (a rollout's surge pod, and
pods evicted or being replaced, count until they are gone). */}}
{{- define "gpuadmit.priorityClassQuotaPods" -}}
{{- .Values.priorityClassQuota.pods | default (mul (int .Values.replicas) 2) -}}
{{- end }}
