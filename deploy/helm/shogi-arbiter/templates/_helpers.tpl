{{/* The one image every workload runs. */}}
{{- define "shogi-arbiter.image" -}}
{{- if not .Values.image.tag -}}
{{- fail "image.tag is empty: pin the image to a tag or a digest" -}}
{{- end -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "shogi-arbiter.labels" -}}
app.kubernetes.io/part-of: shogi-arbiter
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The worker roles: values key, binary (and object) name, variable prefix, NATS user key. */}}
{{- define "shogi-arbiter.workerRoles" -}}
- key: watcher
  name: repetition-watcher
  prefix: REPETITION_WATCHER
  component: watcher
- key: judge
  name: impasse-judge
  prefix: IMPASSE_JUDGE
  component: judge
{{- end -}}

{{/* The Secret holding the NATS passwords. */}}
{{- define "shogi-arbiter.natsAuthSecret" -}}
{{- default "shogi-arbiter-nats-auth" .Values.nats.auth.existingSecret -}}
{{- end -}}

{{/*
The NATS connection of a pod running as NATS user key `user` (validator, watcher, judge,
admin, csa): env entries. Call with (dict "root" $ "user" "validator").
*/}}
{{- define "shogi-arbiter.natsEnv" -}}
{{- $v := .root.Values.nats -}}
{{- if $v.auth.enabled }}
- name: NATS_USER
  value: {{ index $v.auth.users .user | quote }}
- name: NATS_PASSWORD_FILE
  value: /etc/shogi-arbiter/nats-auth/password
{{- if has .user (list "watcher" "judge" "csa") }}
{{- /* In accounts of their own (deploy/nats/auth.conf): the streams' API is imported. */}}
- name: NATS_JS_API_PREFIX
  value: {{ $v.auth.importedApiPrefix | quote }}
{{- end }}
{{- end }}
{{- if $v.tls.enabled }}
- name: NATS_TLS_REQUIRED
  value: "true"
- name: NATS_TLS_CA
  value: /etc/shogi-arbiter/nats-tls/ca.crt
{{- if $v.tls.mutual }}
- name: NATS_TLS_CERT
  value: /etc/shogi-arbiter/nats-tls/tls.crt
- name: NATS_TLS_KEY
  value: /etc/shogi-arbiter/nats-tls/tls.key
{{- end }}
{{- end }}
{{- end -}}

{{/* The volume mounts that go with natsEnv. */}}
{{- define "shogi-arbiter.natsMounts" -}}
{{- $v := .Values.nats -}}
{{- if $v.auth.enabled }}
- name: nats-auth
  mountPath: /etc/shogi-arbiter/nats-auth
  readOnly: true
{{- end }}
{{- if $v.tls.enabled }}
- name: nats-tls
  mountPath: /etc/shogi-arbiter/nats-tls
  readOnly: true
{{- end }}
{{- end -}}

{{/*
The volumes that go with natsEnv: only this user's password, as the file `password`.
Call with (dict "root" $ "user" "validator").
*/}}
{{- define "shogi-arbiter.natsVolumes" -}}
{{- $v := .root.Values.nats -}}
{{- if $v.auth.enabled }}
- name: nats-auth
  secret:
    secretName: {{ include "shogi-arbiter.natsAuthSecret" .root }}
    defaultMode: 288 # 0440, group 10001 (fsGroup)
    items:
      - key: {{ .user }}
        path: password
{{- end }}
{{- if $v.tls.enabled }}
{{- if not $v.tls.existingSecret }}
{{- fail "nats.tls.enabled needs nats.tls.existingSecret (ca.crt, and tls.crt/tls.key for mutual TLS)" }}
{{- end }}
- name: nats-tls
  secret:
    secretName: {{ $v.tls.existingSecret }}
    defaultMode: 288 # 0440
{{- end }}
{{- end -}}

{{/* The container security context every container runs with. */}}
{{- define "shogi-arbiter.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end -}}
