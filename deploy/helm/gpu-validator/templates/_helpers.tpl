{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "gpu-validator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified release name. */}}
{{- define "gpu-validator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "gpu-validator.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "gpu-validator.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpu-validator.serviceAccountName" -}}
{{- default (include "gpu-validator.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "gpu-validator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "gpu-validator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "gpu-validator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The ConfigMap with the workload template overrides, when there are any. */}}
{{- define "gpu-validator.workloadConfigMap" -}}
{{- printf "%s-workload-template" (include "gpu-validator.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpu-validator.workloadTemplatePath" -}}
/etc/gpu-validator/workload-template.yaml
{{- end -}}

{{/* Environment every gpu-validator process of the validator pod gets. */}}
{{- define "gpu-validator.commonEnv" -}}
- name: NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
- name: OPERATOR_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: OUTPUT_DIR
  value: {{ .Values.hostPaths.validations | quote }}
- name: LOG_FORMAT
  value: {{ .Values.logFormat | quote }}
{{- end -}}

{{/* The volume mount of the marker folder. */}}
{{/*
The marker folder mount; dict "root" $ "privileged" BOOL.  Bidirectional only in a privileged
container (kube-apiserver refuses it elsewhere); HostToContainer is enough to write markers
(plain files) and to see a folder mounted on the host later.
*/}}
{{- define "gpu-validator.validationsMount" -}}
- name: run-nvidia-validations
  mountPath: {{ .root.Values.hostPaths.validations }}
  mountPropagation: {{ if .privileged }}Bidirectional{{ else }}HostToContainer{{ end }}
{{- end -}}

{{/* "true" when container NAME runs privileged: securityContext.privileged when set, else privileged.NAME; dict "root" $ "name" NAME. */}}
{{- define "gpu-validator.privileged" -}}
{{- $sc := .root.Values.securityContext | default dict -}}
{{- if hasKey $sc "privileged" -}}
{{- ternary "true" "false" (eq (toString $sc.privileged) "true") -}}
{{- else -}}
{{- ternary "true" "false" (eq (toString (index (.root.Values.privileged | default dict) .name)) "true") -}}
{{- end -}}
{{- end -}}

{{/* The securityContext of container NAME (dict "root" $ "name" NAME): the values' one with privileged set, and
allowPrivilegeEscalation: false when not privileged. */}}
{{- define "gpu-validator.securityContext" -}}
{{- $priv := eq (include "gpu-validator.privileged" .) "true" -}}
{{- $sc := omit (.root.Values.securityContext | default dict) "privileged" -}}
{{- $_ := set $sc "privileged" $priv -}}
{{- if and (not $priv) (not (hasKey $sc "allowPrivilegeEscalation")) -}}
{{- $_ := set $sc "allowPrivilegeEscalation" false -}}
{{- end -}}
{{- toYaml $sc -}}
{{- end -}}


{{/*
The metrics exporter (`gpu-validator metrics`, with the node-level signal when nodeStatus.enabled),
after its name: dict "root" $ "sidecar" BOOL.  As a native sidecar it also knows its own pod
(POD_NAME) to report the validation in progress; as the main container it cleans up in preStop.
*/}}
{{- define "gpu-validator.metricsContainer" -}}
{{- $v := .root.Values -}}
{{- $ns := $v.nodeStatus -}}
image: {{ include "gpu-validator.image" .root }}
imagePullPolicy: {{ $v.image.pullPolicy }}
command: ["gpu-validator", "metrics", "--listen", ":{{ $v.metrics.port }}"]
ports:
  - name: metrics
    containerPort: {{ $v.metrics.port }}
    protocol: TCP
readinessProbe:
  httpGet:
    path: /healthz
    port: metrics
  periodSeconds: 10
env:
  {{- include "gpu-validator.commonEnv" .root | nindent 2 }}
  {{- if $ns.enabled }}
  {{- with $ns.conditionType }}
  - name: NODE_CONDITION
    value: {{ . | quote }}
  {{- end }}
  {{- with $ns.label }}
  - name: NODE_LABEL
    value: {{ . | quote }}
  {{- end }}
  {{- with $ns.startupTaint }}
  - name: STARTUP_TAINT
    value: {{ . | quote }}
  {{- end }}
  {{- with $ns.lastComponent }}
  - name: LAST_COMPONENT
    value: {{ . | quote }}
  {{- end }}
  {{- if .sidecar }}
  - name: POD_NAME
    valueFrom:
      fieldRef:
        fieldPath: metadata.name
  {{- end }}
  {{- end }}
  {{- with $v.env }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with $v.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $ctx := dict "root" .root "name" "metrics" }}
securityContext:
  {{- include "gpu-validator.securityContext" $ctx | nindent 2 }}
{{- if not .sidecar }}
lifecycle:
  preStop:
    exec:
      command: ["gpu-validator", "cleanup"]
{{- end }}
volumeMounts:
  {{- include "gpu-validator.validationsMount" (dict "root" .root "privileged" (eq (include "gpu-validator.privileged" $ctx) "true")) | nindent 2 }}
{{- end -}}
