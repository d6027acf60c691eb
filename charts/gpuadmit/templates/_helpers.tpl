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
- a workload (webhooks.workloads), when one of its pod templates (each entry's `template` or `templates`
  paths, the policy's) is such a pod, or one of its podSpec sites (`podSpecs`, the policy's pods[].podSpec)
  has such a container, a GPU toleration in one of its fields sources or such a label or annotation in one
  of its metadata sources;
- a claim, when it carries a gpuadmit.io/ label or annotation (checkpoint-pvc's marker).
Every list comes from webhooks.matchConditions and must cover what the policy looks at (gpuResources,
gpu-intent imagePatterns and labels, stray-gpu-toleration taintKeys, checkpoint-pvc's marker): the chart
test checks them against the default policy. Guards on every optional field: a CEL error counts as a
webhook failure and failurePolicy applies. A schema-less custom resource (x-kubernetes-preserve-unknown-fields)
may hold any JSON type anywhere, so each value is checked to be a map or a list (type(x) == map) before it
is selected from or iterated: has(x) is true for a field present as null (a pod without containers arrives
with "containers": null), iterating null or a string is an error, and so is has(x.f) on a list.
*/}}
{{- /* gpuadmit.celAny (dict "fmt" FORMAT "v" CEL "list" STRINGS): FORMAT applied to CEL and each string (as a
CEL literal), joined by ||; false for an empty list. The lists are unrolled rather than iterated
(["a", "b"].exists(p, r.startsWith(p))): a comprehension costs several times as much per item, and the API
server limits the cost (1,000,000 per condition, 2,500,000 for all of a webhook's conditions on one object; a
condition over it is an error, so failurePolicy applies). A RayCluster of 500 worker groups of three containers
each costs about 275,000 (tests/chart/routing/make-wide-rayclusters.py). An Argo Workflow of 500 templates, each
with a container, two sidecars, an init container, tolerations and metadata, is within it
(make-wide-workflows.py); one of 1,000 such templates still is, one of 2,000 is not (an error). */ -}}
{{- define "gpuadmit.celAny" -}}
{{- $parts := list -}}
{{- range .list }}{{ $parts = append $parts (printf $.fmt $.v (toJson .)) }}{{ end -}}
{{- if $parts }}({{ join " || " $parts }}){{ else }}false{{ end -}}
{{- end -}}

{{- /* gpuadmit.gpuContainerCEL (dict "m" matchConditions "v" CEL ["resources" MEMBER] ["imageObjects" true]): CEL
(any JSON value) is a GPU-related container: a map whose MEMBER (default resources; computeResources for a
Tekton step, resourcesPerNode for a TrainJob's trainer).limits or .requests name a resource starting with one
of resourcePrefixes, or whose image contains one of imageSubstrings. With imageObjects (a podSpec site's
containers) an image may also be a map {repository, tag}, as a NIMService's: the policy reads it as
repository:tag, which is built once ([text].exists(img, ...)) and tested for each substring. */ -}}
{{- define "gpuadmit.gpuContainerCEL" -}}
{{- $m := .m -}}{{- $c := .v -}}
{{- $f := include "gpuadmit.celField" (dict "base" $c "name" (.resources | default "resources")) | fromJsonArray -}}
{{- $res := include "gpuadmit.celAny" (dict "fmt" "%s.startsWith(%s)" "v" "r" "list" $m.resourcePrefixes) -}}
{{- $image := include "gpuadmit.celAny" (dict "fmt" "%s.contains(%s)" "v" (printf "%s.image" $c) "list" $m.imageSubstrings) -}}
{{- $imageObject := "" -}}
{{- if .imageObjects -}}
{{- $text := printf "((has(%[1]s.image.repository) && type(%[1]s.image.repository) == string ? %[1]s.image.repository : \"\") + (has(%[1]s.image.tag) && type(%[1]s.image.tag) == string ? \":\" + %[1]s.image.tag : \"\"))" $c -}}
{{- $imageObject = printf " || (has(%[1]s.image) && type(%[1]s.image) == map && [%[2]s].exists(img, %[3]s))" $c $text (include "gpuadmit.celAny" (dict "fmt" "%s.contains(%s)" "v" "img" "list" $m.imageSubstrings)) -}}
{{- end -}}
{{- printf "type(%[1]s) == map && ((%[4]s && type(%[5]s) == map && ((has(%[5]s.limits) && type(%[5]s.limits) == map && %[5]s.limits.exists(r, %[2]s)) || (has(%[5]s.requests) && type(%[5]s.requests) == map && %[5]s.requests.exists(r, %[2]s)))) || (has(%[1]s.image) && type(%[1]s.image) == string && %[3]s)%[6]s)" $c $res $image (index $f 0) (index $f 1) $imageObject -}}
{{- end -}}

{{- /* gpuadmit.celRef (dict "ref" REF "v" CEL): [guard, selection] of a podSpec site's ref (its fields,
metadata or containers members): "@" is the site object CEL itself (guard true), a member path (a.b) is under
it and $.path under `object`; the guard tests each step present and a map (the policy reads a source only
when it is a map). */ -}}
{{- define "gpuadmit.celRef" -}}
{{- if not (regexMatch "^(@|([$][.])?[A-Za-z0-9_-]+([.][A-Za-z0-9_-]+)*)$" .ref) -}}
{{- fail (printf "webhooks.workloads podSpecs ref %q: expected @ (the object itself), a member path such as metadata, or $.path from the object's root" .ref) -}}
{{- end -}}
{{- $base := .v -}}{{- $guards := list -}}
{{- if ne .ref "@" -}}
{{- $path := .ref -}}
{{- if hasPrefix "$." .ref }}{{ $base = "object" }}{{ $path = trimPrefix "$." .ref }}{{ end -}}
{{- range splitList "." $path -}}
{{- $f := include "gpuadmit.celField" (dict "base" $base "name" .) | fromJsonArray -}}
{{- $base = index $f 1 -}}
{{- $guards = append $guards (printf "%s && type(%s) == map" (index $f 0) $base) -}}
{{- end -}}
{{- end -}}
{{- toJson (list (join " && " $guards | default "true") $base) -}}
{{- end -}}

{{- /* gpuadmit.gpuTolerationsCEL (dict "m" matchConditions "v" CEL): CEL (a map) holds tolerations, one with
a key in tolerationKeys. */ -}}
{{- define "gpuadmit.gpuTolerationsCEL" -}}
{{- $v := .v -}}
(has({{ $v }}.tolerations) && type({{ $v }}.tolerations) == list && {{ $v }}.tolerations.exists(t, type(t) == map && has(t.key) && {{ include "gpuadmit.celAny" (dict "fmt" "%s == %s" "v" "t.key" "list" .m.tolerationKeys) }}))
{{- end -}}

{{- /* gpuadmit.gpuMetadataCEL (dict "m" matchConditions "v" CEL): CEL (a map: a pod's metadata, or a podSpec
site's metadata source) has a label in labelKeys or an annotation starting with one of annotationPrefixes. */ -}}
{{- define "gpuadmit.gpuMetadataCEL" -}}
{{- $m := .m -}}{{- $v := .v -}}
(has({{ $v }}.labels) && type({{ $v }}.labels) == map && {{ include "gpuadmit.celAny" (dict "fmt" "%[2]s in %[1]s" "v" (printf "%s.labels" $v) "list" $m.labelKeys) }}) ||
(has({{ $v }}.annotations) && type({{ $v }}.annotations) == map && {{ $v }}.annotations.exists(k, {{ include "gpuadmit.celAny" (dict "fmt" "%s.startsWith(%s)" "v" "k" "list" $m.annotationPrefixes) }}))
{{- end -}}

{{- /* gpuadmit.gpuSpecCEL (dict "m" matchConditions "v" CEL "members" LIST ["resources" MEMBER] ["fields" REFS]
["imageObjects" true]): CEL (a map: a PodSpec, or a PodSpec-like object) is GPU-related: a GPU-related container
in its containers or initContainers, or at one of the members LIST names (each a dotted member path holding one
container or a list of them: a KServe predictor's model; "@": the object itself is one container, a
NIMService's spec), or DRA resourceClaims (any: which are GPUs only the cluster's device classes say), or a
toleration with one of tolerationKeys in the object, or in each of REFS (default
["@"]; the refs under the object, gpuadmit.celRef; $.paths are the caller's). The containers and members'
containers hold their requests and limits in MEMBER (default resources), initContainers in resources (as the
policy assembles the pod). The members' containers are gathered into one list,
(has(x) ? (type(x) == list ? x : [x]) : []) + ..., so that the container test is written once. */ -}}
{{- define "gpuadmit.gpuSpecCEL" -}}
{{- $m := .m -}}{{- $v := .v -}}
{{- $gpuContainer := include "gpuadmit.gpuContainerCEL" (dict "m" $m "v" "c" "resources" .resources "imageObjects" .imageObjects) -}}
{{- $gpuInit := include "gpuadmit.gpuContainerCEL" (dict "m" $m "v" "c") -}}
(has({{ $v }}.containers) && type({{ $v }}.containers) == list && {{ $v }}.containers.exists(c, {{ $gpuContainer }})) ||
(has({{ $v }}.initContainers) && type({{ $v }}.initContainers) == list && {{ $v }}.initContainers.exists(c, {{ $gpuInit }})) ||
(has({{ $v }}.resourceClaims) && type({{ $v }}.resourceClaims) == list && size({{ $v }}.resourceClaims) > 0)
{{- $parts := list -}}
{{- range .members }}
{{- if eq . "@" -}}
{{- $parts = append $parts (printf "[%s]" $v) -}}
{{- else -}}
{{- if not (regexMatch "^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$" .) -}}
{{- fail (printf "webhooks.workloads podSpecs containers %q: a member path is dot-separated member names (letters, digits, _ and -), such as model, or @ (the object itself)" .) -}}
{{- end -}}
{{- $has := list -}}{{- $base := $v -}}
{{- range $j, $name := splitList "." . -}}
{{- if $j }}{{ $has = append $has (printf "type(%s) == map" $base) }}{{ end -}}
{{- $f := include "gpuadmit.celField" (dict "base" $base "name" $name) | fromJsonArray -}}
{{- $has = append $has (index $f 0) -}}
{{- $base = index $f 1 -}}
{{- end -}}
{{- $parts = append $parts (printf "(%s ? (type(%s) == list ? %s : [%s]) : [])" (join " && " $has) $base $base $base) -}}
{{- end -}}
{{- end }}
{{- if $parts }} ||
({{ join " + " $parts }}).exists(c, {{ $gpuContainer }})
{{- end }}
{{- range (.fields | default (list "@")) }}
{{- if not (hasPrefix "$." .) }} ||
{{- $r := include "gpuadmit.celRef" (dict "ref" . "v" $v) | fromJsonArray }}
{{ if eq . "@" }}{{ include "gpuadmit.gpuTolerationsCEL" (dict "m" $m "v" $v) }}{{ else }}({{ index $r 0 }} && {{ include "gpuadmit.gpuTolerationsCEL" (dict "m" $m "v" (index $r 1)) }}){{ end }}
{{- end }}
{{- end }}
{{- end -}}

{{- /* gpuadmit.gpuPodCEL (dict "m" matchConditions "v" VAR): VAR (a pod, or a pod template; a map) is
GPU-related: its spec (gpuadmit.gpuSpecCEL), or a label in labelKeys, or an annotation starting with one of
annotationPrefixes. */ -}}
{{- define "gpuadmit.gpuPodCEL" -}}
{{- $m := .m -}}{{- $v := .v -}}
(has({{ $v }}.spec) && type({{ $v }}.spec) == map && (
{{ include "gpuadmit.gpuSpecCEL" (dict "m" $m "v" (printf "%s.spec" $v) "members" list) }})) ||
(has({{ $v }}.metadata) && type({{ $v }}.metadata) == map && (
{{ include "gpuadmit.gpuMetadataCEL" (dict "m" $m "v" (printf "%s.metadata" $v)) }}))
{{- end -}}

{{- /* gpuadmit.gpuSiteCEL (dict "m" matchConditions "v" VAR "site" SITE): VAR (a podSpec site's object, a map)
is GPU-related: gpuadmit.gpuSpecCEL with the site's containers members, resources member and fields, or a
metadata source under it (its metadata refs other than $.paths) with a label in labelKeys or an annotation
starting with one of annotationPrefixes. The site's $.path refs are the same for every object at its path:
gpuadmit.siteRootCELs tests them once. */ -}}
{{- define "gpuadmit.gpuSiteCEL" -}}
{{- $m := .m -}}{{- $v := .v -}}
{{- include "gpuadmit.gpuSpecCEL" (dict "m" $m "v" $v "members" .site.containers "resources" .site.resources "fields" .site.fields "imageObjects" true) }}
{{- range .site.metadata }}
{{- if not (hasPrefix "$." .) }} ||
{{- $r := include "gpuadmit.celRef" (dict "ref" . "v" $v) | fromJsonArray }}
({{ if ne (index $r 0) "true" }}{{ index $r 0 }} && {{ end }}({{ include "gpuadmit.gpuMetadataCEL" (dict "m" $m "v" (index $r 1)) }}))
{{- end }}
{{- end }}
{{- end -}}

{{- /* gpuadmit.siteRootCELs (dict "m" matchConditions "site" SITE): the site's $.path refs as a JSON list of CEL
conditions on `object`: a GPU toleration in a fields source (an Argo workflow's spec.tolerations, a Tekton
run's podTemplate), a GPU label or annotation in a metadata source (a TaskRun's own metadata). Tested once
per object, not per site object, and without asking whether the path holds any site object: sending more is
safe, and it keeps the cost of a workflow of many templates linear. */ -}}
{{- define "gpuadmit.siteRootCELs" -}}
{{- $m := .m -}}{{- $out := list -}}
{{- range .site.fields }}
{{- if hasPrefix "$." . }}
{{- $r := include "gpuadmit.celRef" (dict "ref" . "v" "object") | fromJsonArray }}
{{- $out = append $out (printf "(%s && %s)" (index $r 0) (include "gpuadmit.gpuTolerationsCEL" (dict "m" $m "v" (index $r 1)))) }}
{{- end }}
{{- end }}
{{- range .site.metadata }}
{{- if hasPrefix "$." . }}
{{- $r := include "gpuadmit.celRef" (dict "ref" . "v" "object") | fromJsonArray }}
{{- $out = append $out (printf "(%s && (%s))" (index $r 0) (include "gpuadmit.gpuMetadataCEL" (dict "m" $m "v" (index $r 1)) | replace "\n" " ")) }}
{{- end }}
{{- end }}
{{- toJson $out -}}
{{- end -}}

{{- /* gpuadmit.workloadStepPattern: one step of the grammar of a pod template path, the policy's (docs/policy.md
"Workloads"): step *("." step); step = member [select]; member = letters, digits, _, - and * (a glob over
map keys); select = [*], [key=*], [key=value] or [index]. values.schema.json holds the same pattern. */ -}}
{{- define "gpuadmit.workloadStepPattern" -}}
[A-Za-z0-9_*-]+(\[(\*|[0-9]{1,9}|[A-Za-z0-9_-]+=[^\[\]]+)\])?
{{- end -}}

{{- /* gpuadmit.workloadTemplates (a webhooks.workloads entry): its template paths as a JSON list
(`templates`, else `template`, else none when it has podSpecs, else spec.template). */ -}}
{{- define "gpuadmit.workloadTemplates" -}}
{{- if .templates -}}{{- toJson .templates -}}
{{- else if .template -}}{{- toJson (list .template) -}}
{{- else if .podSpecs -}}[]
{{- else -}}{{- toJson (list "spec.template") -}}
{{- end -}}
{{- end -}}

{{- /* gpuadmit.workloadPodSpecs (a webhooks.workloads entry): its podSpec sites as a JSON list of
{"path": PATH, "containers": [MEMBER, ...], "resources": MEMBER, "fields": [REF, ...], "metadata": [REF, ...]},
defaults filled in as the policy's: containers [], resources "resources", fields ["@"] (an empty list too),
metadata []. */ -}}
{{- define "gpuadmit.workloadPodSpecs" -}}
{{- $sites := list -}}
{{- range .podSpecs }}{{ $sites = append $sites (dict "path" .path "containers" (.containers | default list) "resources" (.resources | default "resources") "fields" (.fields | default (list "@")) "metadata" (.metadata | default list)) }}{{ end -}}
{{- toJson $sites -}}
{{- end -}}

{{- /* gpuadmit.celField (dict "base" CEL "name" MEMBER): [has-test, selection] of member NAME of the map
BASE: base.name when NAME is a CEL identifier, else base["name"] (a name with - or a CEL reserved word). */ -}}
{{- define "gpuadmit.celField" -}}
{{- $reserved := list "true" "false" "null" "in" "as" "break" "const" "continue" "else" "for" "function" "if" "import" "let" "loop" "package" "namespace" "return" "var" "void" "while" -}}
{{- if and (regexMatch "^[A-Za-z_][A-Za-z0-9_]*$" .name) (not (has .name $reserved)) -}}
{{- toJson (list (printf "has(%s.%s)" .base .name) (printf "%s.%s" .base .name)) -}}
{{- else -}}
{{- toJson (list (printf "%s in %s" (toJson .name) .base) (printf "%s[%s]" .base (toJson .name))) -}}
{{- end -}}
{{- end -}}

{{- /* gpuadmit.templateCEL (dict "path" PATH "pod" CEL "var" VAR "what" WHAT): some object at PATH in `object`
(bound to VAR, default pt: a pod template; ps for a podSpec site, WHAT "podSpec", whose CEL is gpuSpecCEL's)
satisfies the CEL. The path is the policy's (gpuadmit.workloadStepPattern):
- a member m: has(b.m), after type(b) == map;
- a glob member (*, *suffix, prefix*, *infix*, or any pattern of *): b.exists(kN, <key matches> && ...);
- [*] or [key=*]: type(b.m) == list && b.m.exists(iN, ...), every item (the key is not looked at: sending
  an item without it too over-approximates, which is safe);
- [key=value]: the same, for items with type(iN) == map && has(iN.key) && iN.key == "value";
- [3]: type(b.m) == list && size(b.m) > 3, then b.m[3].
The object itself must be a map. The expression may send more than the policy judges, never less. */ -}}
{{- define "gpuadmit.templateCEL" -}}
{{- $stepRe := include "gpuadmit.workloadStepPattern" . -}}
{{- if or (gt (len .path) 512) (not (regexMatch (printf "^%s(\\.%s)*$" $stepRe $stepRe) .path)) -}}
{{- fail (printf "webhooks.workloads %s %q: a path is dot-separated steps, each a member name (letters, digits, _, - and *) optionally followed by [*], [key=*], [key=value] or [index], at most 512 bytes" (.what | default "template") .path) -}}
{{- end -}}
{{- $base := "object" -}}{{- $isMap := true -}}{{- $open := "" -}}{{- $close := "" -}}
{{- range $i, $step := regexFindAll $stepRe .path -1 -}}
{{- $member := regexFind "^[A-Za-z0-9_*-]+" $step -}}
{{- $select := trimPrefix $member $step | trimPrefix "[" | trimSuffix "]" -}}
{{- /* The member step: from a map. */ -}}
{{- if not $isMap -}}{{- $open = printf "%stype(%s) == map && " $open $base -}}{{- end -}}
{{- if contains "*" $member -}}
{{- $k := printf "k%d" $i -}}
{{- $inner := trimAll "*" $member -}}
{{- $match := "" -}}
{{- if eq $member "*" -}}
{{- else if contains "*" $inner -}}{{- $match = printf "%s.matches(%s)" $k (printf "^%s$" (regexReplaceAll "\\*+" $member ".*") | toJson) -}}
{{- else if and (hasPrefix "*" $member) (hasSuffix "*" $member) -}}{{- $match = printf "%s.contains(%s)" $k (toJson $inner) -}}
{{- else if hasPrefix "*" $member -}}{{- $match = printf "%s.endsWith(%s)" $k (toJson $inner) -}}
{{- else -}}{{- $match = printf "%s.startsWith(%s)" $k (toJson $inner) -}}
{{- end -}}
{{- $open = printf "%s%s.exists(%s, %s" $open $base $k (ternary "" (printf "%s && " $match) (eq $match "")) -}}
{{- $close = printf "%s)" $close -}}
{{- $base = printf "%s[%s]" $base $k -}}
{{- else -}}
{{- $f := include "gpuadmit.celField" (dict "base" $base "name" $member) | fromJsonArray -}}
{{- $open = printf "%s%s && " $open (index $f 0) -}}
{{- $base = index $f 1 -}}
{{- end -}}
{{- $isMap = false -}}
{{- /* The select step: into a list. */ -}}
{{- if $select -}}
{{- $open = printf "%stype(%s) == list && " $open $base -}}
{{- if regexMatch "^[0-9]+$" $select -}}
{{- $n := atoi $select -}}
{{- $open = printf "%ssize(%s) > %d && " $open $base $n -}}
{{- $base = printf "%s[%d]" $base $n -}}
{{- else -}}
{{- $it := printf "i%d" $i -}}
{{- $open = printf "%s%s.exists(%s, " $open $base $it -}}
{{- $close = printf "%s)" $close -}}
{{- $base = $it -}}
{{- $key := regexFind "^[A-Za-z0-9_-]+" $select -}}
{{- $value := trimPrefix (printf "%s=" $key) $select -}}
{{- if and (ne $select "*") (ne $value "*") -}}
{{- $f := include "gpuadmit.celField" (dict "base" $it "name" $key) | fromJsonArray -}}
{{- $open = printf "%stype(%s) == map && %s && %s == %s && " $open $it (index $f 0) (index $f 1) (toJson $value) -}}
{{- $isMap = true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $isMap -}}{{- $open = printf "%stype(%s) == map && " $open $base -}}{{- end -}}
{{- printf "(%s[%s].exists(%s, %s)%s)" $open $base (.var | default "pt") .pod $close -}}
{{- end -}}

{{- /* One condition per webhooks.workloads entry (matchConditions must all hold, so two entries naming the
same group and resource, e.g. one per version, would otherwise each hide what only the other's path finds):
an entry's templates and podSpec sites are its own and those of every entry naming its group and one of its
resources. A podSpec site is GPU-related as a pod's spec is (gpuadmit.gpuSiteCEL: its containers members
counted too, requests and limits in its resources member, tolerations from each of its fields sources) or
by a label or annotation of one of its metadata sources; its $.path refs are tested once per object
(gpuadmit.siteRootCELs). */ -}}
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
{{- $all := .Values.webhooks.workloads }}
{{- range $i, $w := $all }}
{{- $paths := list }}{{- $sites := list }}{{- $roots := list }}
{{- range $u := $all }}
{{- $shared := false }}
{{- range $u.resources }}{{ if and (eq $u.apiGroup $w.apiGroup) (has . $w.resources) }}{{ $shared = true }}{{ end }}{{ end }}
{{- if $shared }}
{{- $paths = concat $paths (include "gpuadmit.workloadTemplates" $u | fromJsonArray) | uniq }}
{{- $sites = concat $sites (include "gpuadmit.workloadPodSpecs" $u | fromJsonArray) | uniq }}
{{- end }}
{{- end }}
{{- range $sites }}{{ $roots = concat $roots (include "gpuadmit.siteRootCELs" (dict "m" $m "site" .) | fromJsonArray) | uniq }}{{ end }}
- name: gpu-related-templates-{{ $i }}
  expression: >-
    !(request.resource.group == {{ $w.apiGroup | quote }} && request.resource.resource in {{ toJson $w.resources }})
    {{- range $paths }} ||
    {{ include "gpuadmit.templateCEL" (dict "path" . "pod" $pod) }}
    {{- end }}
    {{- range $sites }} ||
    {{ include "gpuadmit.templateCEL" (dict "path" .path "var" "ps" "what" "podSpec" "pod" (include "gpuadmit.gpuSiteCEL" (dict "m" $m "v" "ps" "site" .) | replace "\n" " ")) }}
    {{- end }}
    {{- range $roots }} ||
    {{ . }}
    {{- end }}
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

{{/*
"true" when the opt-out label's guard is rendered: asked for, a label to guard, and an API server that serves
ValidatingAdmissionPolicy v1 (GA and on in 1.30). By version, since helm template (Argo CD) lists no kinds in
Capabilities.APIVersions and assumes its own Kubernetes version (--kube-version sets another).
*/}}
{{- define "gpuadmit.optOutGuard" -}}
{{- if and .Values.optOutGuard.enabled .Values.webhooks.namespaceSelector.optOutLabel (semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version) -}}
true
{{- end -}}
{{- end }}
