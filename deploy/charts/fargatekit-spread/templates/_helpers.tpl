{{- define "spread.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "spread.selectorLabels" -}}
app.kubernetes.io/name: fargatekit-spread
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "spread.labels" -}}
{{ include "spread.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "spread.tlsSecret" -}}
{{ include "spread.fullname" . }}-tls
{{- end -}}

{{/* The configuration's name sorts before EKS's Fargate webhook
(0500-amazon-eks-fargate-mutation.amazonaws.com): the API server calls
mutating webhooks in name order, so the profile label spread sets is there
when EKS's webhook reads it. */}}
{{- define "spread.webhookName" -}}
0100-spread.fargatekit.io
{{- end -}}
