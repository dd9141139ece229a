{{/* Labels of manifests/ plus Helm's own. */}}
{{- define "skiff.labels" -}}
{{- range $k, $v := .labels }}
{{ $k }}: {{ $v | quote }}
{{- end }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service | quote }}
app.kubernetes.io/instance: {{ .root.Release.Name | quote }}
{{- end }}

{{- define "skiff.replicas" -}}
{{- if .Values.ha.enabled }}{{ max 2 (int .Values.replicas) }}{{ else }}{{ .Values.replicas }}{{ end }}
{{- end }}

{{- define "skiff.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
