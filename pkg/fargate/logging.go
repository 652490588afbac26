package fargate

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fargate logging: the namespace and ConfigMap of Fargate's built-in log
// router, and what the ConfigMap may hold (EKS user guide, "Fargate
// logging").
const (
	LoggingNamespace = "aws-observability"
	LoggingConfigMap = "aws-logging"
	// LoggingNamespaceLabel must be "enabled" on LoggingNamespace.
	LoggingNamespaceLabel = "aws-observability"
	// MaxLoggingChars is the most characters the ConfigMap may hold.
	MaxLoggingChars = 5300
	// LoggingAnnotation is the pod annotation in which EKS records the
	// logging state it gave a Fargate pod at its creation.
	LoggingAnnotation = "Logging"
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

// LoggingNamespaceEnabled reports whether a namespace named
// LoggingNamespace with these labels is one Fargate reads the logging
// ConfigMap from: labelled aws-observability: enabled.
func LoggingNamespaceEnabled(labels map[string]string) bool {
	return labels[LoggingNamespaceLabel] == "enabled"
}

// LoggingProblem is one constraint of Fargate's log router that the
// aws-logging ConfigMap breaks.
type LoggingProblem struct {
	// Key is the data key that holds the problem; "" for the ConfigMap as
	// a whole.
	Key     string
	Message string
}

// LoggingProblems validates the data of the aws-logging ConfigMap: the keys,
// its size, and the Fluent Bit sections of each key, in key order.
func LoggingProblems(data map[string]string) []LoggingProblem {
	var out []LoggingProblem
	if _, ok := data["output.conf"]; !ok {
		out = append(out, LoggingProblem{Message: "output.conf is missing: Fargate ships no logs without an [OUTPUT]"})
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	total := 0
	for _, key := range keys {
		value := data[key]
		total += utf8.RuneCountInString(key) + utf8.RuneCountInString(value)
		section, known := loggingKeys[key]
		switch {
		case !known:
			out = append(out, LoggingProblem{key, fmt.Sprintf("key %q is not read by Fargate (allowed: filters.conf, output.conf, parsers.conf, flb_log_cw)", key)})
		case key == "flb_log_cw":
			if value != "true" && value != "false" {
				out = append(out, LoggingProblem{key, fmt.Sprintf("flb_log_cw must be \"true\" or \"false\", not %q", value)})
			}
		default:
			for _, p := range checkSections(value, section) {
				out = append(out, LoggingProblem{key, key + ": " + p})
			}
		}
	}
	if total > MaxLoggingChars {
		out = append(out, LoggingProblem{Message: fmt.Sprintf("the configuration has %d characters; Fargate accepts at most %d", total, MaxLoggingChars)})
	}
	return out
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

// LoggingSource is what a Fargate pod's logging is decided from when the pod
// is created: the aws-logging ConfigMap as it is then.
type LoggingSource struct {
	// Found: the ConfigMap exists in a namespace labelled
	// aws-observability: enabled (without the label, Fargate ignores it, as
	// FG052 says).
	Found bool
	Data  map[string]string
}

// Logging is the logging state of one Fargate pod: the value of its
// LoggingAnnotation and the event fargate-scheduler records about it.
type Logging struct {
	Enabled bool
	// Annotation is the value of LoggingAnnotation.
	Annotation string
	// Event is the event's type (Normal, Warning), reason and message.
	EventType, Reason, Message string
	// Problem is, for an invalid ConfigMap, the problem the message names.
	Problem string
}

// The logging states, as EKS shows them on a pod (many public `kubectl
// describe pod` outputs; containers-roadmap#2165 for the annotation of a
// pod without the ConfigMap).
var (
	LoggingEnabled = Logging{Enabled: true, Annotation: "LoggingEnabled", EventType: "Normal", Reason: "LoggingEnabled",
		Message: "Successfully enabled logging for pod"}
	LoggingNotFound = Logging{Annotation: "LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND", EventType: "Warning", Reason: "LoggingDisabled",
		Message: `Disabled logging because aws-logging configmap was not found. configmap "aws-logging" not found`}
)

// InvalidLogging is what EKS does with the logging of a pod created while
// the aws-logging ConfigMap breaks a constraint (LoggingProblems).
type InvalidLogging string

// The models of an invalid ConfigMap.
const (
	// InvalidLoggingDisabled disables the pod's logging with a Warning event
	// naming the problem: the event one user reported for an unsupported
	// output plugin (DataDog/documentation#24023). The default.
	InvalidLoggingDisabled InvalidLogging = "disabled"
	// InvalidLoggingEnabled enables it anyway: the log router starts and
	// ships nothing.
	InvalidLoggingEnabled InvalidLogging = "enabled"
)

// ParseInvalidLogging reads the invalidLogging setting; "" is the default.
func ParseInvalidLogging(s string) (InvalidLogging, error) {
	switch v := InvalidLogging(s); v {
	case "":
		return InvalidLoggingDisabled, nil
	case InvalidLoggingDisabled, InvalidLoggingEnabled:
		return v, nil
	}
	return "", fmt.Errorf("%q is not %s or %s", s, InvalidLoggingDisabled, InvalidLoggingEnabled)
}

// LoggingOf decides the logging of a Fargate pod created now, from the
// ConfigMap as it is.
func LoggingOf(src LoggingSource, s Settings) Logging {
	if !src.Found {
		return LoggingNotFound
	}
	problems := LoggingProblems(src.Data)
	if len(problems) == 0 || s.InvalidLogging == InvalidLoggingEnabled {
		return LoggingEnabled
	}
	return LoggingInvalid(problems[0].Message)
}

// LoggingInvalidAnnotation is the Logging annotation of a pod created while
// the ConfigMap was invalid: the code is the emulator's (unconfirmed).
const LoggingInvalidAnnotation = "LoggingDisabled: LOGGING_CONFIGMAP_INVALID"

// LoggingInvalid is the logging of a pod created while the ConfigMap had
// problem (LoggingProblem.Message): disabled, with the event one user
// reported (DataDog/documentation#24023) naming it.
func LoggingInvalid(problem string) Logging {
	message := "Disabled logging for pod due to invalid configmap. "
	if problem != "" {
		message += problem + ". "
	}
	return Logging{Annotation: LoggingInvalidAnnotation, EventType: "Warning", Reason: "LoggingDisabled",
		Message: message + "Please fix the logging configmap", Problem: problem}
}
