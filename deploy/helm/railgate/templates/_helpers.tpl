{{/* Names: <release>-railgate, shortened to 63 characters (a DNS label). */}}
{{- define "railgate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* A component's object name; leaves room for the component suffix. */}}
{{- define "railgate.componentName" -}}
{{- printf "%s-%s" (include "railgate.fullname" .root | trunc 52 | trimSuffix "-") .component -}}
{{- end -}}

{{- define "railgate.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "railgate.labels" -}}
{{ include "railgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "railgate.secretName" -}}
{{- default (include "railgate.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "railgate.catalogConfigMap" -}}
{{- default (printf "%s-catalog" (include "railgate.fullname" .)) .Values.catalog.existingConfigMap -}}
{{- end -}}

{{/* The gRPC scheme: https when the hop runs mTLS. */}}
{{- define "railgate.grpcScheme" -}}
{{- if .Values.grpcTls.enabled }}https{{ else }}http{{ end -}}
{{- end -}}

{{/*
Refuses to render a deployment that cannot work: every replica must share one Redis and one
PostgreSQL (an unset REDIS_URL would fall back to a process-local store).
*/}}
{{- define "railgate.checkValues" -}}
{{- if and .Values.redis.url .Values.redis.clusterNodes -}}
{{- fail "redis.url and redis.clusterNodes cannot both be set: choose one" -}}
{{- end -}}
{{- if not .Values.secrets.existingSecret -}}
{{- if not .Values.secrets.internalToken -}}
{{- fail "secrets.internalToken is required (32+ characters, e.g. openssl rand -hex 32), or secrets.existingSecret" -}}
{{- end -}}
{{- if not .Values.database.url -}}
{{- fail "database.url is required (postgres://...): replicas share the request log, or set secrets.existingSecret with database-url" -}}
{{- end -}}
{{- if not (or .Values.redis.url .Values.redis.clusterNodes) -}}
{{- fail "redis.url or redis.clusterNodes is required: replicas share one Redis" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.grpcTls.enabled (not .Values.grpcTls.secretName) -}}
{{- fail "grpcTls.secretName is required when grpcTls.enabled is true" -}}
{{- end -}}
{{- end -}}

{{/* The stores: the services only (the gateway holds no store and no database credential). */}}
{{- define "railgate.storeEnv" -}}
{{- $secret := include "railgate.secretName" . -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ $secret }}, key: database-url }
{{- if .Values.redis.clusterNodes }}
- name: RAILGATE_REDIS_CLUSTER_NODES
  value: {{ .Values.redis.clusterNodes | quote }}
{{- else }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef: { name: {{ $secret }}, key: redis-url }
{{- end }}
- name: RAILGATE_REDIS_PREFIX
  value: {{ .Values.redis.prefix | quote }}
- name: RAILGATE_REQUEST_LOG_RETENTION_DAYS
  value: {{ .Values.database.retentionDays | quote }}
{{- end -}}

{{/* Settings every component gets. */}}
{{- define "railgate.commonEnv" -}}
- name: RAILGATE_INTERNAL_TOKEN
  valueFrom:
    secretKeyRef: { name: {{ include "railgate.secretName" . }}, key: internal-token }
- name: RAILGATE_GRPC_HOST
  value: "0.0.0.0"
- name: RAILGATE_GUARDRAIL_GRPC_PORT
  value: {{ .Values.guardrail.port | quote }}
- name: RAILGATE_SPEECH_GRPC_PORT
  value: {{ .Values.speech.port | quote }}
{{- if .Values.grpcTls.enabled }}
- name: RAILGATE_GRPC_TLS_CERT
  value: /etc/railgate/grpc-tls/tls.crt
- name: RAILGATE_GRPC_TLS_KEY
  value: /etc/railgate/grpc-tls/tls.key
- name: RAILGATE_GRPC_TLS_CA
  value: /etc/railgate/grpc-tls/ca.crt
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}
