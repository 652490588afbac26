package clustersetup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// LoggingConfig validates the aws-logging ConfigMap of Fargate's built-in log router.
var LoggingConfig = &rules.Rule{
	ID: "FG051", Name: "aws-logging-config", Category: rules.CategoryConfig, Severity: rules.Warning,
	Summary: "The aws-logging ConfigMap breaks a constraint of Fargate's built-in Fluent Bit.",
	Doc: "Fargate ships logs with a built-in Fluent Bit configured by the ConfigMap `aws-logging` in the namespace " +
		"`aws-observability`. EKS accepts only: the keys `filters.conf`, `output.conf` (required), `parsers.conf` and " +
		"`flb_log_cw`; at most 5300 characters; only `[FILTER]`, `[OUTPUT]` and `[PARSER]` sections, each in its own key; " +
		"`Name` and `Match` in filters and outputs, `Name` and `Format` in parsers; the filters grep, parser, " +
		"record_modifier, rewrite_tag, throttle, nest, modify and kubernetes; the outputs es, firehose, kinesis_firehose, " +
		"cloudwatch, cloudwatch_logs and kinesis; no `${ENV}` references; and not the keys Kube_URL, Kube_CA_File, " +
		"Kube_Token_Command or Kube_Token_File, which EKS manages. A broken configuration silently ships no logs. " +
		"Changes apply only to pods created afterwards.",
	Unconfirmed: "Whether EKS counts the 5300 characters over keys and values, as fargatekit does, or over values only is not documented.",
	Remediation: "Fix the problems named in the message, then restart the Fargate workloads so that new pods pick the configuration up.",
	Check: func(ctx *rules.Context, obj *object.Object, _ *rules.Workload) []rules.Finding {
		cm, ok := obj.Typed.(*corev1.ConfigMap)
		if !ok || cm.Name != fargate.LoggingConfigMap || ctx.NamespaceOf(obj.Ref) != fargate.LoggingNamespace {
			return nil
		}
		var out []rules.Finding
		for _, p := range fargate.LoggingProblems(cm.Data) {
			path := "data"
			if p.Key != "" {
				path = object.Key("data", p.Key)
			}
			out = append(out, rules.At(obj, path, "%s", p.Message))
		}
		return out
	},
}

// LoggingNamespace flags an aws-observability namespace without the label Fargate looks for.
var LoggingNamespace = &rules.Rule{
	ID: "FG052", Name: "aws-observability-label", Category: rules.CategoryConfig, Severity: rules.Warning,
	Summary: "The aws-observability namespace lacks the label aws-observability: enabled.",
	Doc: "Fargate's built-in log router reads its configuration only from a namespace named `aws-observability` " +
		"labelled `aws-observability: enabled`. Without the label, Fargate pods ship no logs.",
	Remediation: "Add the label `aws-observability: enabled` to the namespace.",
	Check: func(_ *rules.Context, obj *object.Object, _ *rules.Workload) []rules.Finding {
		if obj.Ref.Kind != "Namespace" || obj.Ref.APIVersion != "v1" || obj.Ref.Name != fargate.LoggingNamespace || fargate.LoggingNamespaceEnabled(obj.Labels) {
			return nil
		}
		return []rules.Finding{rules.At(obj, "metadata", "the namespace has no label aws-observability: enabled, so Fargate ignores its logging configuration")}
	},
}
