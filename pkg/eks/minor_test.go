package eks

import (
	"strings"
	"testing"
)

func TestParseMinor(t *testing.T) {
	good := []struct {
		in, want string
	}{
		{"1.29", "1.29"},
		{"v1.29", "1.29"},
		{"1.29.3", "1.29"},
		{"v1.29.3-eks-abc", "1.29"},
		{"v1.29.3+build.1", "1.29"},
		{"1.9", "1.9"},
		{"1.09", "1.9"},
		{"2.0", "2.0"},
		{"1.35.0-eks-1234567", "1.35"},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMinor(tc.in)
			if err != nil {
				t.Fatalf("ParseMinor(%q) error: %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("ParseMinor(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}

	bad := []string{
		"", "1", "v1", "x.y", "1.x", "x.29", "1.", ".29", "1.29.", "1.29.3.4",
		"0.9", "V1.29", " 1.29", "1.-29", "1.2a", "vv1.29", "-1.29",
		"1.99999999999999999999999",
	}
	for _, in := range bad {
		t.Run("bad/"+in, func(t *testing.T) {
			got, err := ParseMinor(in)
			if err == nil {
				t.Fatalf("ParseMinor(%q) = %q, want error", in, got)
			}
			if !strings.Contains(err.Error(), `expected major.minor such as "1.29"`) {
				t.Errorf("ParseMinor(%q) error %q does not say what was expected", in, err)
			}
		})
	}
}

func TestCompareMinor(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.9", "1.16", -1},
		{"1.16", "1.9", 1},
		{"1.16", "1.16", 0},
		{"1.29", "1.3", 1},
		{"1.30", "1.29", 1},
		{"1.99", "2.0", -1},
		{"2.1", "1.35", 1},
		{"1.22", "1.25", -1},
	}
	for _, tc := range tests {
		t.Run(tc.a+"_vs_"+tc.b, func(t *testing.T) {
			if got := CompareMinor(tc.a, tc.b); got != tc.want {
				t.Errorf("CompareMinor(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
