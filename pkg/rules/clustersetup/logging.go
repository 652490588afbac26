package clustersetup

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Fargate logging: the namespace, ConfigMap and what it may hold (EKS user
// guide, "Fargate logging").
const (
	loggingNamespace = "aws-observability"
	loggingConfigMap = "aws-logging"
	loggingLabel     = "aws-observability"
	maxLoggingChars  = 5300
)

var (
	loggingKeys = map[string]string{"filters.conf": "FILTER", "output.conf": "OUTPUT", "parsers.conf": "PARSER", "flb_log_cw": ""}
	filterNames = set("grep", "parser", "record_modifier", "rewrite_tag", "throttle", "nest", "modify", "kubernetes")
	outputNames = set("es", "firehose", "kinesis_firehose", "cloudwatch", "cloudwatch_logs", "kinesis")
	managedKeys = set("kube_url", "kube_ca_file", "kube_token_command", "kube_token_file")
	required    = map[string][]string{"FILTER": {"Name", "Match"}, "OUTPUT": {"Name", "Match"}, "PARSER": {"Name", "Format"}}
	sectionLine = regexp.MustCompile(`^\[([A-Za-z_]+)\]$`)
	envVar      = regexp.MustCompile(`\$\{[^}]*\}`)
)

func set(vals ...string) map[string]bool {
	m := map[string]bool{}
	for _, v := range vals {
		m[v] = true
	}
	return m
}

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
		if !ok || cm.Name != loggingConfigMap || ctx.NamespaceOf(obj.Ref) != loggingNamespace {
			return nil
		}
		var out []rules.Finding
		report := func(path, format string, args ...any) {
			out = append(out, rules.At(obj, path, format, args...))
		}
		if _, ok := cm.Data["output.conf"]; !ok {
			report("data", "output.conf is missing: Fargate ships no logs without an [OUTPUT]")
		}
		total := 0
		for _, key := range sortedKeys(cm.Data) {
			value := cm.Data[key]
			total += utf8.RuneCountInString(key) + utf8.RuneCountInString(value)
			path := object.Key("data", key)
			section, known := loggingKeys[key]
			switch {
			case !known:
				report(path, "key %q is not read by Fargate (allowed: filters.conf, output.conf, parsers.conf, flb_log_cw)", key)
			case key == "flb_log_cw":
				if value != "true" && value != "false" {
					report(path, "flb_log_cw must be \"true\" or \"false\", not %q", value)
				}
			default:
				for _, p := range checkSections(value, section) {
					report(path, "%s: %s", key, p)
				}
			}
		}
		if total > maxLoggingChars {
			report("data", "the configuration has %d characters; Fargate accepts at most %d", total, maxLoggingChars)
		}
		return out
	},
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkSections checks the Fluent Bit sections of one key, all of which must be of kind want.
func checkSections(conf, want string) []string {
	var problems []string
	type section struct {
		kind string
		line int
		keys map[string]string
	}
	var sections []*section
	for i, raw := range strings.Split(conf, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if envVar.MatchString(line) {
			problems = append(problems, fmt.Sprintf("line %d uses an environment variable (%s), which Fargate does not expand", i+1, envVar.FindString(line)))
		}
		if m := sectionLine.FindStringSubmatch(line); m != nil {
			s := &section{kind: strings.ToUpper(m[1]), line: i + 1, keys: map[string]string{}}
			sections = append(sections, s)
			if s.kind != want {
				problems = append(problems, fmt.Sprintf("line %d: [%s] is not allowed here, only [%s]", i+1, s.kind, want))
			}
			continue
		}
		if len(sections) == 0 {
			problems = append(problems, fmt.Sprintf("line %d is outside any [%s] section", i+1, want))
			continue
		}
		k, v := line, ""
		if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
			k, v = line[:i], line[i+1:]
		}
		if managedKeys[strings.ToLower(k)] {
			problems = append(problems, fmt.Sprintf("line %d sets %s, which EKS manages", i+1, k))
		}
		sections[len(sections)-1].keys[strings.ToLower(k)] = strings.TrimSpace(v)
	}
	if len(sections) == 0 {
		problems = append(problems, fmt.Sprintf("no [%s] section", want))
	}
	for _, s := range sections {
		for _, k := range required[s.kind] {
			if _, ok := s.keys[strings.ToLower(k)]; !ok {
				problems = append(problems, fmt.Sprintf("the [%s] section at line %d has no %s", s.kind, s.line, k))
			}
		}
		name := strings.ToLower(s.keys["name"])
		if s.kind == "FILTER" && name != "" && !filterNames[name] {
			problems = append(problems, fmt.Sprintf("filter %q at line %d is not supported on Fargate", name, s.line))
		}
		if s.kind == "OUTPUT" && name != "" && !outputNames[name] {
			problems = append(problems, fmt.Sprintf("output %q at line %d is not supported on Fargate", name, s.line))
		}
	}
	return problems
}

// LoggingNamespace flags an aws-observability namespace without the label Fargate looks for.
var LoggingNamespace = &rules.Rule{
	ID: "FG052", Name: "aws-observability-label", Category: rules.CategoryConfig, Severity: rules.Warning,
	Summary: "The aws-observability namespace lacks the label aws-observability: enabled.",
	Doc: "Fargate's built-in log router reads its configuration only from a namespace named `aws-observability` " +
		"labelled `aws-observability: enabled`. Without the label, Fargate pods ship no logs.",
	Remediation: "Add the label `aws-observability: enabled` to the namespace.",
	Check: func(_ *rules.Context, obj *object.Object, _ *rules.Workload) []rules.Finding {
		if obj.Ref.Kind != "Namespace" || obj.Ref.APIVersion != "v1" || obj.Ref.Name != loggingNamespace || obj.Labels[loggingLabel] == "enabled" {
			return nil
		}
		return []rules.Finding{rules.At(obj, "metadata", "the namespace has no label aws-observability: enabled, so Fargate ignores its logging configuration")}
	},
}
