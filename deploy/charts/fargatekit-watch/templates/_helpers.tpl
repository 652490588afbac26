{{- define "watch.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "watch.selectorLabels" -}}
app.kubernetes.io/name: fargatekit-watch
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "watch.labels" -}}
{{ include "watch.selectorLabels" . }}
app.kubernetes.io/component: watch
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
