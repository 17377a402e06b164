{{/* The release's resource names and labels. */}}
{{- define "referrals-sandbox.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "referrals-sandbox.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "referrals-sandbox.labels" -}}
{{ include "referrals-sandbox.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The Secret the admin token and the Redis URL come from. */}}
{{- define "referrals-sandbox.adminSecret" -}}
{{- .Values.adminToken.existingSecret | default (include "referrals-sandbox.fullname" .) -}}
{{- end -}}
{{- define "referrals-sandbox.redisSecret" -}}
{{- .Values.redis.existingSecret | default (include "referrals-sandbox.fullname" .) -}}
{{- end -}}
{{- define "referrals-sandbox.redis" -}}
{{- or .Values.redis.url .Values.redis.existingSecret -}}
{{- end -}}

{{/* The URL clients reach the sandbox at: publicURL, or the Ingress's host. */}}
{{- define "referrals-sandbox.publicURL" -}}
{{- if .Values.publicURL -}}
{{- .Values.publicURL -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s" (ternary "https" "http" (not (empty .Values.ingress.tls))) .Values.ingress.host -}}
{{- end -}}
{{- end -}}
