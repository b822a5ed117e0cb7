{{/*
The alert rules, as Prometheus' rule groups: the PrometheusRule's spec (prometheusrule.yaml), and
deploy/prometheus/shogi-arbiter.rules.yaml, the same rendered with the default values for a
Prometheus without the operator (`make alert-rules` writes it; deploy-check holds the two equal).
Each alert names its runbook, docs/runbooks/<alert>.md; the thresholds are `alerts.*` values,
whose comments give the reasons for the defaults. The arbiter's series are selected by the
release's namespace (the label a ServiceMonitor's or PodMonitor's scrape adds), NATS's too: the
NATS chart runs in the same namespace (deploy/README.md).
*/}}
{{- define "shogi-arbiter.alertGroups" -}}
{{- $a := .Values.alerts -}}
{{- $ns := printf "namespace=%q" .Release.Namespace -}}
{{- $url := trimSuffix "/" $a.runbookBaseUrl -}}
{{- $workers := "repetition-watcher|impasse-judge" -}}
{{- $backlog := printf "sum by (namespace, shogi_role) (max by (namespace, shogi_role, messaging_consumer_group_name) (shogi_consumer_lag{%s, shogi_role=~%q}" $ns $workers -}}
{{- $errors := printf "rpc_server_call_duration_seconds_count{%s, error_type=~%q}" $ns $a.errorAnswers.codes -}}
groups:
  - name: shogi-arbiter
    rules:
      - alert: ShogiRoleBacklogGrowing
        expr: |
          {{ $backlog }}))
            > {{ $a.backlog.messages }}
          and
          {{ $backlog }}))
            > {{ $backlog }} offset {{ $a.backlog.growingOver }}))
        for: {{ $a.backlog.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'{{ $labels.shogi_role }}: {{ $value }} messages not finished with, and more than`}} {{ $a.backlog.growingOver }} {{`ago'`}}
          description: The role's 16 durable consumers hold more undelivered and unacknowledged messages than the threshold, and the backlog is still growing; verdicts of the games in its partitions come late.
          runbook_url: {{ $url }}/ShogiRoleBacklogGrowing.md
      - alert: ShogiVerdictLatencyHigh
        expr: |
          histogram_quantile(0.99, sum by (namespace, shogi_role, le) (rate(shogi_verdict_latency_seconds_bucket{ {{- $ns -}} }[{{ $a.verdictLatency.window }}])))
            > {{ $a.verdictLatency.p99Seconds }}
          and on (namespace, shogi_role)
          sum by (namespace, shogi_role) (rate(shogi_verdict_latency_seconds_count{ {{- $ns -}} }[{{ $a.verdictLatency.window }}]))
            > {{ $a.verdictLatency.minPerSecond }}
        for: {{ $a.verdictLatency.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'{{ $labels.shogi_role }}: verdict latency p99 {{ $value | humanizeDuration }}, objective`}} {{ $a.verdictLatency.p99Seconds }}{{`s'`}}
          description: From the storage of a game's deciding move to its verdict's announcement, the slowest 1 % of verdicts take longer than the objective.
          runbook_url: {{ $url }}/ShogiVerdictLatencyHigh.md
      - alert: ShogiClockFlagsLate
        expr: |
          histogram_quantile(0.99, sum by (namespace, le) (rate(shogi_clock_flag_delay_seconds_bucket{ {{- $ns -}} }[{{ $a.flagDelay.window }}])))
            > {{ $a.flagDelay.p99Seconds }}
          and on (namespace)
          sum by (namespace) (increase(shogi_clock_flag_delay_seconds_count{ {{- $ns -}} }[{{ $a.flagDelay.window }}]))
            >= {{ $a.flagDelay.minFlags }}
        for: {{ $a.flagDelay.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'flags fired late: p99 {{ $value | humanizeDuration }} from the deadline of a silent side to its time-up, objective`}} {{ $a.flagDelay.p99Seconds }}{{`s'`}}
          description: The validator records a silent side's time-up in the game's log later than the objective after its deadline (the stream's message schedule firing, then the clock-flag consumer); until it does, the game stays open past its deadline.
          runbook_url: {{ $url }}/ShogiClockFlagsLate.md
      - alert: ShogiEntriesSetAside
        expr: |
          sum by (namespace, shogi_role, shogi_aside_reason) (increase(shogi_events_set_aside_total{ {{- $ns -}} }[{{ $a.setAside.window }}]))
            > {{ $a.setAside.entries }}
        labels:
          severity: warning
        annotations:
          summary: {{`'{{ $labels.shogi_role }} set aside {{ $value | humanize }} bus entries ({{ $labels.shogi_aside_reason }}) in`}} {{ $a.setAside.window }}{{`'`}}
          description: A reader found entries on the games' stream it could not apply and copied them to SHOGI_ASIDE; the games go on from their valid entries.
          runbook_url: {{ $url }}/ShogiEntriesSetAside.md
      - alert: ShogiVerdictCheckBehind
        expr: |
          max by (namespace) (shogi_consumer_lag{ {{- $ns -}}, messaging_consumer_group_name="verdict-check"})
            > {{ $a.verdictCheck.messages }}
        for: {{ $a.verdictCheck.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'verdict-check: {{ $value }} announced verdicts not yet checked against the log'`}}
          description: The validators' shared consumer verdict-check falls behind; a verdict whose validator died before recording it waits for this check to reach platforms.
          runbook_url: {{ $url }}/ShogiVerdictCheckBehind.md
      - alert: ShogiServiceDown
        expr: |
          up{ {{- $ns -}}, job=~{{ $a.jobs | quote }}} == 0
        for: {{ $a.down.for }}
        labels:
          severity: critical
        annotations:
          summary: {{`'{{ $labels.job }} ({{ $labels.pod }}): metrics endpoint not answering'`}}
          description: Prometheus cannot scrape the pod's /metrics; the process is down, hung or unreachable.
          runbook_url: {{ $url }}/ShogiServiceDown.md
      - alert: ShogiServiceNotServing
        expr: |
          arbiter_health_serving{ {{- $ns -}} } == 0
        for: {{ $a.notServing.for }}
        labels:
          severity: critical
        annotations:
          summary: {{`'{{ $labels.grpc_health_service }} ({{ $labels.pod }}): health NOT_SERVING'`}}
          description: The process runs but its grpc.health.v1 status is NOT_SERVING (its bus connection lost, or a part not doing its job) for longer than a drain takes.
          runbook_url: {{ $url }}/ShogiServiceNotServing.md
      - alert: ShogiNatsCredentialsRefused
        expr: |
          sum by (namespace, pod, reason) (increase(arbiter_nats_refused_total{ {{- $ns -}} }[{{ $a.natsRefused.window }}]))
            > {{ $a.natsRefused.refusals }}
        labels:
          severity: critical
        annotations:
          summary: {{`'{{ $labels.pod }}: NATS refused its connection ({{ $labels.reason }}) {{ $value | humanize }} times in`}} {{ $a.natsRefused.window }}{{`'`}}
          description: A NATS server refused this service's credentials or TLS while it reconnected; it cannot reach the bus until they match again.
          runbook_url: {{ $url }}/ShogiNatsCredentialsRefused.md
      - alert: ShogiGrpcClientsRefused
        expr: |
          sum by (namespace, reason) (rate(arbiter_grpc_refused_total{ {{- $ns -}} }[{{ $a.grpcRefused.window }}]))
            > {{ $a.grpcRefused.perSecond }}
        for: {{ $a.grpcRefused.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'move-validator refuses {{ printf "%.2f" $value }} gRPC clients a second ({{ $labels.reason }})'`}}
          description: Calls or TLS handshakes without the right token or client certificate keep arriving; a platform's client lost its credentials, or someone is knocking.
          runbook_url: {{ $url }}/ShogiGrpcClientsRefused.md
      - alert: ShogiErrorAnswers
        expr: |
          (
            sum by (namespace, rpc_method, error_type) (rate({{ $errors }}[{{ $a.errorAnswers.window }}]))
            / ignoring (error_type) group_left
            sum by (namespace, rpc_method) (rate(rpc_server_call_duration_seconds_count{ {{- $ns -}} }[{{ $a.errorAnswers.window }}]))
          ) > {{ $a.errorAnswers.ratio }}
          and
          sum by (namespace, rpc_method, error_type) (rate({{ $errors }}[{{ $a.errorAnswers.window }}]))
            > {{ $a.errorAnswers.minPerSecond }}
        for: {{ $a.errorAnswers.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'{{ $labels.rpc_method }} answers {{ $labels.error_type }} to {{ $value | humanizePercentage }} of its calls'`}}
          description: The validator answers an error that is the server's trouble, not the client's, to more calls than the threshold.
          runbook_url: {{ $url }}/ShogiErrorAnswers.md
      - alert: NatsStoreNearLimit
        expr: |
          nats_varz_jetstream_stats_storage{ {{- $ns -}} } / nats_varz_jetstream_config_max_storage{ {{- $ns -}} }
            > {{ $a.natsStore.ratio }}
          and
          nats_varz_jetstream_config_max_storage{ {{- $ns -}} } > 0
        for: {{ $a.natsStore.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'{{ $labels.pod }}: JetStream file store {{ $value | humanizePercentage }} of its limit'`}}
          description: When the store is full, JetStream refuses every write and the validator answers UNAVAILABLE to every move.
          runbook_url: {{ $url }}/NatsStoreNearLimit.md
      - alert: ShogiStoreNearLimit
        expr: |
          max by (namespace, messaging_destination_name) (shogi_store_used_bytes{ {{- $ns -}} })
            / max by (namespace, messaging_destination_name) (shogi_store_limit_bytes{ {{- $ns -}} })
            > {{ $a.store.ratio }}
        for: {{ $a.store.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'{{ $labels.messaging_destination_name }}: {{ $value | humanizePercentage }} of the store''s limit'`}}
          description: The games' stream, as the validator reads it, holds more than the threshold of the NATS servers' max_file_store; at the limit JetStream refuses every write and the validator answers UNAVAILABLE naming the store.
          runbook_url: {{ $url }}/ShogiStoreNearLimit.md
      - alert: NatsReplicaNotCurrent
        expr: |
          nats_healthz_status{ {{- $ns -}} } == 1
        for: {{ $a.natsReplicas.for }}
        labels:
          severity: warning
        annotations:
          summary: {{`'{{ $labels.pod }}: /healthz says a stream or consumer replica is not current'`}}
          description: The server's own health check fails, most often because a replica of a stream or consumer it holds is behind its leader; the next server must not be restarted until it is current.
          runbook_url: {{ $url }}/NatsReplicaNotCurrent.md
      - alert: NatsServerRestarted
        expr: |
          changes(max by (namespace, pod) (nats_varz_start{ {{- $ns -}} })[{{ $a.natsRestarts.window }}:1m]) > 0
        labels:
          severity: {{ $a.natsRestarts.severity }}
        annotations:
          summary: {{`'{{ $labels.pod }}: nats-server restarted {{ $value }} times in`}} {{ $a.natsRestarts.window }}{{`'`}}
          description: The server's start time changed; each restart makes its replicas catch up, and several close together risk the quorum.
          runbook_url: {{ $url }}/NatsServerRestarted.md
{{- end -}}
