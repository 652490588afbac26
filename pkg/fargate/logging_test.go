package fargate

import "testing"

// TestLoggingOf: a pod's logging follows the ConfigMap as it is when the
// pod is created: none, valid, or invalid under either setting.
func TestLoggingOf(t *testing.T) {
	valid := map[string]string{"output.conf": "[OUTPUT]\n    Name cloudwatch_logs\n    Match *\n"}
	invalid := map[string]string{"output.conf": "[OUTPUT]\n    Name http\n    Match *\n", "fluent-bit.conf": "[SERVICE]\n"}
	tests := []struct {
		name    string
		src     LoggingSource
		setting InvalidLogging
		want    Logging
	}{
		{"no ConfigMap", LoggingSource{}, InvalidLoggingDisabled, LoggingNotFound},
		{"valid", LoggingSource{Found: true, Data: valid}, InvalidLoggingDisabled, LoggingEnabled},
		{"invalid: the first problem, in key order", LoggingSource{Found: true, Data: invalid}, InvalidLoggingDisabled, Logging{
			Annotation: "LoggingDisabled: LOGGING_CONFIGMAP_INVALID", EventType: "Warning", Reason: "LoggingDisabled",
			Message: `Disabled logging for pod due to invalid configmap. key "fluent-bit.conf" is not read by Fargate (allowed: filters.conf, output.conf, parsers.conf, flb_log_cw). Please fix the logging configmap`,
			Problem: `key "fluent-bit.conf" is not read by Fargate (allowed: filters.conf, output.conf, parsers.conf, flb_log_cw)`}},
		{"invalid, enabled by the setting", LoggingSource{Found: true, Data: invalid}, InvalidLoggingEnabled, LoggingEnabled},
		{"invalid, the zero setting is disabled", LoggingSource{Found: true, Data: invalid}, "", Logging{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LoggingOf(tt.src, Settings{InvalidLogging: tt.setting})
			if tt.want == (Logging{}) {
				if got.Enabled {
					t.Errorf("logging enabled: %+v", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("LoggingOf = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseInvalidLogging(t *testing.T) {
	for in, want := range map[string]InvalidLogging{"": InvalidLoggingDisabled, "disabled": InvalidLoggingDisabled, "enabled": InvalidLoggingEnabled} {
		if got, err := ParseInvalidLogging(in); err != nil || got != want {
			t.Errorf("ParseInvalidLogging(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseInvalidLogging("ignored"); err == nil {
		t.Error("ParseInvalidLogging(ignored) accepted")
	}
}
