package fargate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOutageSubnets: during an outage, fargate-scheduler draws as the AZ
// outage model says, and among all the subnets when every AZ is down.
func TestOutageSubnets(t *testing.T) {
	azs := map[string]string{"subnet-a": "us-east-1a", "subnet-b": "us-east-1b", "subnet-c": "us-east-1c"}
	azOf := func(id string) (string, bool) { az, ok := azs[id]; return az, ok }
	all := []string{"subnet-a", "subnet-b", "subnet-c", "subnet-unknown"}
	tests := []struct {
		model AZOutage
		down  []string
		want  []string
	}{
		{AZOutageRedraw, nil, all},
		{AZOutageRedraw, []string{"us-east-1a"}, []string{"subnet-b", "subnet-c", "subnet-unknown"}},
		{AZOutageRedraw, []string{"us-east-1a", "us-east-1c"}, []string{"subnet-b", "subnet-unknown"}},
		{AZOutageFail, []string{"us-east-1a"}, all},
	}
	for _, tc := range tests {
		down := func(az string) bool {
			for _, d := range tc.down {
				if d == az {
					return true
				}
			}
			return false
		}
		s := Settings{AZOutage: tc.model}
		if diff := cmp.Diff(tc.want, s.OutageSubnets(all, azOf, down)); diff != "" {
			t.Errorf("%s with %v down (-want +got):\n%s", tc.model, tc.down, diff)
		}
	}
	// Every AZ of a profile down: its subnets as they are, the pod waits.
	s := Settings{AZOutage: AZOutageRedraw}
	if got := s.OutageSubnets([]string{"subnet-a"}, azOf, func(string) bool { return true }); !cmp.Equal(got, []string{"subnet-a"}) {
		t.Errorf("every AZ down: %v, want subnet-a", got)
	}
}

func TestParseAZOutage(t *testing.T) {
	for in, want := range map[string]AZOutage{"": AZOutageRedraw, "redraw": AZOutageRedraw, "fail": AZOutageFail} {
		if got, err := ParseAZOutage(in); err != nil || got != want {
			t.Errorf("ParseAZOutage(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseAZOutage("retry"); err == nil {
		t.Error(`ParseAZOutage("retry") = nil error, want one`)
	}
}
