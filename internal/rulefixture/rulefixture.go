// Package rulefixture reads the rule fixtures of pkg/rules/builtin/testdata:
// manifests whose leading comments set up the run and whose `# want:`
// comments say which rules report which lines. The rules' tests and the
// emulator's parity test read them the same way.
//
// Directives, as comments at the top of a fixture file:
//
//	# profiles: name=web,namespace=prod          (repeatable; inline profile syntax)
//	# pod-identity: namespace/serviceaccount     (repeatable)
//	# target-version: 1.25
//	# settings: {refusePrivilegeEscalation: true}   (.fargatekit.yaml, in flow style)
//	# foundation: ../foundation/broken.state.json     (a --profiles file, relative to the fixture:
//	                                                   its profiles and its infrastructure)
//
// and expectations on the line a finding must point at, with its severity
// when it is not the rule's:
//
//	hostNetwork: true  # want: FG006
//	type: LoadBalancer  # want: FG017=warning
//
// or, for a finding about a resource of the foundation file, on the resource:
//
//	# want-object: FG053 Terraform/aws_vpc.this
//	# want-object: FG058=warning AWS::IAM::Role/InlineRole
//
// A finding about a profile points at its directive, which may carry the
// expectation too.
package rulefixture

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fargatekit/fargatekit/internal/profiles"
	"github.com/fargatekit/fargatekit/internal/settings"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

var (
	directive = regexp.MustCompile(`^#\s*(profiles|pod-identity|target-version|settings|foundation|want-object):\s*(.+)$`)
	want      = regexp.MustCompile(`#\s*want:\s*(.+)$`)
)

// Fixture is one fixture file, read.
type Fixture struct {
	Path string
	Data []byte
	// Context is the run its directives set up.
	Context *rules.Context
	// Settings are its settings directive's (the defaults without one).
	Settings *settings.Settings
	// Wants are the lines each rule must report, by rule ID.
	Wants map[string][]int
	// Severities are the severities expectations name (`# want: FG017=warning`),
	// by "ID:line"; a finding without one has its rule's.
	Severities map[string]rules.Severity
	// WantObjects are the foundation resources each rule must report, by
	// rule ID, as object.Ref.String() names them.
	WantObjects map[string][]string
}

// Read reads the fixture at path.
func Read(path string) (*Fixture, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	price, err := fargate.PriceIn(fargate.DefaultRegion)
	if err != nil {
		return nil, err
	}
	fx := &Fixture{
		Path: path, Data: data, Settings: settings.Default(),
		Context: &rules.Context{Namespace: "default", TargetVersion: "1.35", Region: fargate.DefaultRegion, Price: price},
		Wants:   map[string][]int{}, WantObjects: map[string][]string{}, Severities: map[string]rules.Severity{},
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if m := want.FindStringSubmatch(text); m != nil {
			for _, id := range strings.Fields(m[1]) {
				id, sev, ok := strings.Cut(id, "=")
				if ok {
					s, err := rules.ParseSeverity(sev)
					if err != nil {
						return nil, fmt.Errorf("%s:%d: %w", path, line, err)
					}
					fx.Severities[fmt.Sprintf("%s:%d", id, line)] = s
				}
				fx.Wants[id] = append(fx.Wants[id], line)
			}
			text = text[:len(text)-len(m[0])]
		}
		if m := directive.FindStringSubmatch(strings.TrimSpace(text)); m != nil {
			if err := fx.apply(m[1], strings.TrimSpace(m[2]), object.Source{File: path, Line: line}); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
	}
	fx.Context.Settings = fx.Settings.Fargate
	return fx, sc.Err()
}

func (fx *Fixture) apply(key, value string, at object.Source) error {
	switch key {
	case "profiles":
		p, err := profiles.ParseInline(value)
		if err != nil {
			return err
		}
		p.Source = at
		fx.Context.Profiles = append(fx.Context.Profiles, p)
	case "pod-identity":
		ns, sa, _ := strings.Cut(value, "/")
		fx.Context.PodIdentity = append(fx.Context.PodIdentity, rules.PodIdentityAssociation{Namespace: ns, ServiceAccount: sa})
	case "target-version":
		fx.Context.TargetVersion = value
	case "settings":
		s, err := settings.Parse([]byte(value))
		if err != nil {
			return fmt.Errorf("settings: %w", err)
		}
		fx.Settings = s
	case "foundation":
		set, err := profiles.ReadFile(filepath.Join(filepath.Dir(at.File), value))
		if err != nil {
			return err
		}
		fx.Context.Profiles = append(fx.Context.Profiles, set.Profiles...)
		fx.Context.Foundation = set.Foundation
	case "want-object":
		id, ref, ok := strings.Cut(value, " ")
		if !ok {
			return fmt.Errorf("want-object: %q is not RULE-ID KIND/NAME", value)
		}
		ref = strings.TrimSpace(ref)
		if id, sev, ok := strings.Cut(id, "="); ok {
			s, err := rules.ParseSeverity(sev)
			if err != nil {
				return err
			}
			fx.Severities[id+" "+ref] = s
		}
		id, _, _ = strings.Cut(id, "=")
		fx.WantObjects[id] = append(fx.WantObjects[id], ref)
	}
	return nil
}
