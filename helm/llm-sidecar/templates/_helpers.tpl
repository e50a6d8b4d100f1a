{{/* Names and labels. */}}
{{- define "llm-sidecar.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "llm-sidecar.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "llm-sidecar.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "llm-sidecar.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "llm-sidecar.selectorLabels" -}}
app.kubernetes.io/name: {{ include "llm-sidecar.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "llm-sidecar.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "llm-sidecar.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "llm-sidecar.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The rules ConfigMap, or "" when the image's bundled rules are used. */}}
{{- define "llm-sidecar.rulesConfigMap" -}}
{{- if .Values.rules.existingConfigMap }}
{{- .Values.rules.existingConfigMap }}
{{- else if .Values.rules.files }}
{{- printf "%s-rules" (include "llm-sidecar.fullname" .) }}
{{- end }}
{{- end }}

{{- define "llm-sidecar.configConfigMap" -}}
{{- printf "%s-config" (include "llm-sidecar.fullname" .) }}
{{- end }}

{{/*
Render-time checks; every template that renders a workload or a snippet includes this.
*/}}
{{/* "true" if config: holds the key at $path (one or two levels: "log_level",
"kafka.topics"), else "". */}}
{{- define "llm-sidecar.configHas" -}}
{{- $path := .path }}
{{- if eq (len $path) 1 }}
{{- if hasKey .cfg (first $path) }}true{{ end }}
{{- else }}
{{- $section := get .cfg (first $path) }}
{{- if and (kindIs "map" $section) (hasKey $section (last $path)) }}true{{ end }}
{{- end }}
{{- end }}

{{- define "llm-sidecar.validate" -}}
{{- if not (has .Values.mode (list "standalone" "sidecar")) }}
{{- fail (printf "mode must be standalone or sidecar, not %q" .Values.mode) }}
{{- end }}
{{- if le (float64 .Values.terminationGracePeriodSeconds) (float64 .Values.drainTimeoutSeconds) }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be longer than drainTimeoutSeconds (%v): Kubernetes would kill llm-sidecar before it finishes draining and commits its offsets" .Values.terminationGracePeriodSeconds .Values.drainTimeoutSeconds) }}
{{- end }}
{{- if and (eq .Values.source "kafka") (hasPrefix "SASL" .Values.kafka.securityProtocol) }}
{{- if not (and .Values.kafka.saslUsername .Values.kafka.saslPassword.existingSecret) }}
{{- fail (printf "kafka.securityProtocol %s needs kafka.saslUsername and kafka.saslPassword.existingSecret" .Values.kafka.securityProtocol) }}
{{- end }}
{{- end }}
{{- if and (eq .Values.mode "sidecar") (not .Values.sidecar.podSelector) }}
{{- fail "sidecar mode needs sidecar.podSelector: the labels of the LLM service's pods, for the metrics Service" }}
{{- end }}
{{- if and .Values.keda.enabled (or (ne .Values.mode "standalone") (ne .Values.source "kafka")) }}
{{- fail "keda.enabled scales on Kafka consumer lag: it needs mode standalone and source kafka" }}
{{- end }}
{{- if .Values.judgeWorker.enabled }}
{{- if ne .Values.source "kafka" }}
{{- fail "judgeWorker.enabled needs source kafka: the judge topic is a Kafka topic" }}
{{- end }}
{{- if not .Values.judgeWorker.topic }}
{{- fail "judgeWorker.enabled needs judgeWorker.topic" }}
{{- end }}
{{- if has .Values.judgeWorker.topic .Values.kafka.topics }}
{{- fail (printf "judgeWorker.topic %q is also in kafka.topics: the check path would read its own samples" .Values.judgeWorker.topic) }}
{{- end }}
{{- end }}
{{- if and .Values.rules.files .Values.rules.existingConfigMap }}
{{- fail "rules.files and rules.existingConfigMap are both set: the files would be ignored; give one" }}
{{- end }}
{{- if and (eq .Values.source "mqtt") (eq .Values.mode "standalone") .Values.mqtt.clientId (gt (int .Values.replicaCount) 1) }}
{{- fail (printf "mqtt.clientId %q with replicaCount %v: replicas with one client id take the MQTT session from each other; leave mqtt.clientId empty (each pod's name) or run one replica" .Values.mqtt.clientId .Values.replicaCount) }}
{{- end }}
{{- range $name, $keda := dict "keda" .Values.keda "judgeWorker.keda" .Values.judgeWorker.keda }}
{{- if gt (int $keda.minReplicaCount) (int $keda.maxReplicaCount) }}
{{- fail (printf "%s.minReplicaCount (%v) is above %s.maxReplicaCount (%v)" $name $keda.minReplicaCount $name $keda.maxReplicaCount) }}
{{- end }}
{{- end }}
{{- /* config: keys the chart sets itself: their environment variables would win unseen. */}}
{{- $cfg := .Values.config | default dict }}
{{- $chartSets := list "source=source" "log_level=logLevel" "log_format=logFormat" "rules=rules.files or rules.existingConfigMap" "reload_interval_s=rules.reloadIntervalSeconds" "http.port=port" "limits.drain_timeout_s=drainTimeoutSeconds" }}
{{- if eq .Values.source "kafka" }}
{{- $chartSets = concat $chartSets (list "kafka.bootstrap_servers=kafka.bootstrapServers" "kafka.topics=kafka.topics" "kafka.group_id=kafka.groupId" "kafka.client_id=the pod's name" "kafka.auto_offset_reset=kafka.autoOffsetReset" "kafka.security_protocol=kafka.securityProtocol" "kafka.isolation_level=kafka.isolationLevel" "kafka.on_undecodable=kafka.onUndecodable") }}
{{- else }}
{{- $chartSets = concat $chartSets (list "mqtt.host=mqtt.host" "mqtt.port=mqtt.port" "mqtt.topics=mqtt.topics" "mqtt.client_id=mqtt.clientId or the pod's name") }}
{{- end }}
{{- range $pair := $chartSets }}
{{- $parts := splitList "=" $pair }}
{{- $path := splitList "." (first $parts) }}
{{- if include "llm-sidecar.configHas" (dict "cfg" $cfg "path" $path) }}
{{- fail (printf "config.%s is set by the chart itself (from %s), and its environment variable wins over config:, so this value would be ignored" (first $parts) (last $parts)) }}
{{- end }}
{{- end }}
{{- /* The same for every other variable the pods get (set by some values only, or by extraEnv). */}}
{{- range $var := regexFindAll "name: LLM_SIDECAR_[A-Z0-9_]+" (include "llm-sidecar.env" .) -1 }}
{{- $name := trimPrefix "name: " $var }}
{{- $path := splitList "__" (lower (trimPrefix "LLM_SIDECAR_" $name)) }}
{{- if include "llm-sidecar.configHas" (dict "cfg" $cfg "path" $path) }}
{{- fail (printf "config.%s is also set by the pods' environment variable %s, which wins over config:, so this value would be ignored; set it through the chart's values instead" (join "." $path) $name) }}
{{- end }}
{{- end }}
{{- if eq .Values.source "kafka" }}
{{- range $name, $topic := dict "kafka.dlqTopic" .Values.kafka.dlqTopic "kafka.verdictTopic" .Values.kafka.verdictTopic }}
{{- if and $topic (has $topic $.Values.kafka.topics) }}
{{- fail (printf "%s %q is also in kafka.topics: llm-sidecar would read back what it writes there, in a loop" $name $topic) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.judgeWorker.keda.enabled (not .Values.judgeWorker.enabled) }}
{{- fail "judgeWorker.keda.enabled needs judgeWorker.enabled" }}
{{- end }}
{{- end }}

{{/* Labels of the judge-worker pods: a different name, so no selector of the check path's
Deployment or Service ever matches them. */}}
{{- define "llm-sidecar.workerSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-judge-worker" (include "llm-sidecar.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: judge-worker
{{- end }}

{{/* Labels of the probe pod: its own name, so no other selector matches it. */}}
{{- define "llm-sidecar.probeSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-probe" (include "llm-sidecar.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: probe
{{- end }}

{{- define "llm-sidecar.workerName" -}}
{{- printf "%s-judge-worker" (include "llm-sidecar.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* How many workers share the judge budgets: KEDA's maximum when it scales them. */}}
{{- define "llm-sidecar.judgeWorkers" -}}
{{- if .Values.judgeWorker.keda.enabled }}{{ .Values.judgeWorker.keda.maxReplicaCount }}{{ else }}{{ .Values.judgeWorker.replicas }}{{ end }}
{{- end }}

{{/* The TriggerAuthentication KEDA uses: the one named in values, or the chart's own. */}}
{{- define "llm-sidecar.kedaAuth" -}}
{{- if .Values.keda.authenticationRef }}
{{- .Values.keda.authenticationRef }}
{{- else if hasPrefix "SASL" .Values.kafka.securityProtocol }}
{{- printf "%s-kafka" (include "llm-sidecar.fullname" .) }}
{{- end }}
{{- end }}

{{/* Environment variables: settings from values, secrets by reference. */}}
{{- define "llm-sidecar.env" -}}
- name: LLM_SIDECAR_SOURCE
  value: {{ .Values.source | quote }}
- name: LLM_SIDECAR_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: LLM_SIDECAR_LOG_FORMAT
  value: {{ .Values.logFormat | quote }}
- name: LLM_SIDECAR_HTTP__PORT
  value: {{ .Values.port | quote }}
- name: LLM_SIDECAR_LIMITS__DRAIN_TIMEOUT_S
  value: {{ .Values.drainTimeoutSeconds | quote }}
- name: LLM_SIDECAR_RELOAD_INTERVAL_S
  value: {{ .Values.rules.reloadIntervalSeconds | quote }}
- name: LLM_SIDECAR_RULES
  value: {{ list "/etc/llm-sidecar/rules" | toJson | quote }}
{{- range $key, $values := .Values.labels }}
{{- if $values }}
- name: LLM_SIDECAR_LABELS__{{ upper $key }}
  value: {{ $values | toJson | quote }}
{{- end }}
{{- end }}
{{- if eq .Values.source "kafka" }}
{{- with .Values.kafka }}
- name: LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS
  value: {{ .bootstrapServers | quote }}
- name: LLM_SIDECAR_KAFKA__TOPICS
  value: {{ .topics | toJson | quote }}
- name: LLM_SIDECAR_KAFKA__GROUP_ID
  value: {{ .groupId | quote }}
- name: LLM_SIDECAR_KAFKA__CLIENT_ID
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- if .staticMembership }}
- name: LLM_SIDECAR_KAFKA__GROUP_INSTANCE_ID
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end }}
{{- if .dlqTopic }}
- name: LLM_SIDECAR_KAFKA__DLQ_TOPIC
  value: {{ .dlqTopic | quote }}
{{- end }}
{{- if .verdictTopic }}
- name: LLM_SIDECAR_KAFKA__VERDICT_TOPIC
  value: {{ .verdictTopic | quote }}
{{- end }}
- name: LLM_SIDECAR_KAFKA__AUTO_OFFSET_RESET
  value: {{ .autoOffsetReset | quote }}
- name: LLM_SIDECAR_KAFKA__ISOLATION_LEVEL
  value: {{ .isolationLevel | quote }}
- name: LLM_SIDECAR_KAFKA__ON_UNDECODABLE
  value: {{ .onUndecodable | quote }}
{{- if .compressionType }}
- name: LLM_SIDECAR_KAFKA__COMPRESSION_TYPE
  value: {{ .compressionType | quote }}
{{- end }}
- name: LLM_SIDECAR_KAFKA__SECURITY_PROTOCOL
  value: {{ .securityProtocol | quote }}
{{- if hasPrefix "SASL" .securityProtocol }}
- name: LLM_SIDECAR_KAFKA__SASL_MECHANISM
  value: {{ .saslMechanism | quote }}
{{- end }}
{{- if .saslUsername }}
- name: LLM_SIDECAR_KAFKA__SASL_PLAIN_USERNAME
  value: {{ .saslUsername | quote }}
{{- end }}
{{- if .saslPassword.existingSecret }}
- name: LLM_SIDECAR_KAFKA__SASL_PLAIN_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .saslPassword.existingSecret | quote }}
      key: {{ .saslPassword.key | quote }}
{{- end }}
{{- end }}
{{- else }}
{{- with .Values.mqtt }}
- name: LLM_SIDECAR_MQTT__HOST
  value: {{ .host | quote }}
- name: LLM_SIDECAR_MQTT__PORT
  value: {{ .port | quote }}
- name: LLM_SIDECAR_MQTT__TOPICS
  value: {{ .topics | toJson | quote }}
{{- if .clientId }}
- name: LLM_SIDECAR_MQTT__CLIENT_ID
  value: {{ .clientId | quote }}
{{- else }}
- name: LLM_SIDECAR_MQTT__CLIENT_ID
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end }}
{{- if .username }}
- name: LLM_SIDECAR_MQTT__USERNAME
  value: {{ .username | quote }}
{{- end }}
{{- if .password.existingSecret }}
- name: LLM_SIDECAR_MQTT__PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .password.existingSecret | quote }}
      key: {{ .password.key | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if .Values.judgeWorker.enabled }}
- name: LLM_SIDECAR_JUDGE__ENABLED
  value: "true"
- name: LLM_SIDECAR_JUDGE__TOPIC
  value: {{ .Values.judgeWorker.topic | quote }}
{{- with .Values.judgeWorker.groupId }}
- name: LLM_SIDECAR_JUDGE__GROUP_ID
  value: {{ . | quote }}
{{- end }}
- name: LLM_SIDECAR_JUDGE__WORKERS
  value: {{ include "llm-sidecar.judgeWorkers" . | quote }}
{{- end }}
{{- if .Values.judge.apiKey.existingSecret }}
- name: LLM_SIDECAR_JUDGE__API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.judge.apiKey.existingSecret | quote }}
      key: {{ .Values.judge.apiKey.key | quote }}
{{- end }}
{{- if .Values.checkApi.token.existingSecret }}
- name: LLM_SIDECAR_API__TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.checkApi.token.existingSecret | quote }}
      key: {{ .Values.checkApi.token.key | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The llm-sidecar container: the Deployment uses it, and NOTES.txt prints it for sidecar mode.
*/}}
{{- define "llm-sidecar.container" -}}
- name: llm-sidecar
  image: {{ include "llm-sidecar.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
    - run
    {{- if .Values.config }}
    - --config
    - /etc/llm-sidecar/config/settings.yaml
    {{- end }}
  env:
    {{- include "llm-sidecar.env" . | nindent 4 }}
  ports:
    - name: metrics
      containerPort: {{ .Values.port }}
      protocol: TCP
  {{- with .Values.startupProbe }}
  startupProbe:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.livenessProbe }}
  livenessProbe:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.readinessProbe }}
  readinessProbe:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  resources:
    {{- toYaml .Values.resources | nindent 4 }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  volumeMounts:
    {{- /*
    A directory mount, never subPath: kubelet updates a ConfigMap volume by swapping a symlink
    to a new directory, which gives every file a new mtime, and llm-sidecar's mtime polling
    reloads the rules. subPath mounts are never updated.
    */}}
    {{- if include "llm-sidecar.rulesConfigMap" . }}
    - name: llm-sidecar-rules
      mountPath: /etc/llm-sidecar/rules
      readOnly: true
    {{- end }}
    {{- if .Values.config }}
    - name: llm-sidecar-config
      mountPath: /etc/llm-sidecar/config
      readOnly: true
    {{- end }}
    - name: llm-sidecar-tmp
      mountPath: /tmp
{{- end }}

{{- define "llm-sidecar.volumes" -}}
{{- with include "llm-sidecar.rulesConfigMap" . }}
- name: llm-sidecar-rules
  configMap:
    name: {{ . }}
{{- end }}
{{- if .Values.config }}
- name: llm-sidecar-config
  configMap:
    name: {{ include "llm-sidecar.configConfigMap" . }}
{{- end }}
- name: llm-sidecar-tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end }}

{{/* sasl and tls of KEDA's Kafka trigger when the chart renders the TriggerAuthentication. */}}
{{- define "llm-sidecar.kedaSaslMetadata" -}}
{{- if and (hasPrefix "SASL" .Values.kafka.securityProtocol) (not .Values.keda.authenticationRef) }}
sasl: {{ .Values.kafka.saslMechanism | lower | replace "-" "_" | replace "scram_sha_" "scram_sha" | replace "plain" "plaintext" | quote }}
tls: {{ ternary "enable" "disable" (eq .Values.kafka.securityProtocol "SASL_SSL") | quote }}
{{- end }}
{{- end }}
