package placement_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fargatekit/fargatekit/internal/emulator/placement"
	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/internal/rulefixture"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
	"github.com/fargatekit/fargatekit/pkg/rules/compat"
)

// The parity tests hold `fargatekit check` and the emulator to one answer.
// For each pod, check's engine (every built-in rule) and the emulator's
// webhook and fargate-scheduler logic must agree on whether the pod goes to
// Fargate, under which profile, and for which rules' reasons Fargate refuses
// it: a refusing finding (a blocker of a rule with a Refusal) means a
// refusal, and a refusal means such a finding. Of a pod Fargate runs, they
// agree on whether a container does not get going (FG025, FG027). No control plane is needed:
// the emulator's decisions are pure functions (Webhook.Mutate, Decide).

// outcome is what one side says of a pod.
type outcome struct {
	Fargate bool
	Profile string
	// Refused are the IDs of the rules whose reasons refuse the pod, sorted.
	Refused []string
	// NoStart is true when a container of the pod, placed, does not get
	// going: check reports FG025 or a blocker of FG027, the emulator fails
	// the container.
	NoStart bool
}

// byRefusal maps a refusal kind to the rule that reports it.
var byRefusal = func() map[fargate.RefusalKind]string {
	m := map[fargate.RefusalKind]string{}
	for _, r := range builtin.Rules() {
		if r.Refusal != "" {
			m[r.Refusal] = r.ID
		}
	}
	return m
}()

// catchAll stands in for "no profiles given": the emulator always has
// profiles, so both sides get one that matches every pod.
var catchAll = []fargate.Profile{{Name: "all", Selectors: []fargate.Selector{{Namespace: "*"}}, Subnets: []string{"subnet-private1"}}}

// checkSide runs check's engine over objs and returns its outcome per object.
func checkSide(ctx *rules.Context, objs []*object.Object) []outcome {
	engine := rules.NewEngine(ctx, builtin.Rules(), rules.Options{})
	for _, o := range objs {
		engine.Add(o)
	}
	res := engine.Result()
	out := make([]outcome, len(objs))
	for i, o := range objs {
		for w := range res.Workloads.All() {
			if w.Ref == o.Ref && w.Source == o.Source {
				out[i] = outcome{Fargate: w.Placement.Fargate, Profile: w.Placement.Profile}
			}
		}
		for _, f := range res.Findings {
			if f.Object == o.Ref && f.Source.File == o.Source.File && f.Rule.Refusal != "" && f.Severity == rules.Blocker &&
				!slices.Contains(out[i].Refused, f.Rule.ID) {
				out[i].Refused = append(out[i].Refused, f.Rule.ID)
			}
		}
		slices.Sort(out[i].Refused)
		for _, f := range res.Findings {
			if f.Object == o.Ref && f.Source.File == o.Source.File && len(out[i].Refused) == 0 &&
				(f.Rule == compat.LimitAboveSize || f.Rule == compat.InstanceMetadata && f.Severity == rules.Blocker) {
				out[i].NoStart = true
			}
		}
	}
	return out
}

// emulatorSide sends a pod being created through the webhook (its JSON
// patch applied as the API server would) and, when the webhook sends it to
// fargate-scheduler, through the scheduler's decision.
func emulatorSide(t testing.TB, pod *corev1.Pod, profiles []fargate.Profile, s fargate.Settings) outcome {
	t.Helper()
	hook := &placement.Webhook{Profiles: func() []fargate.Profile { return profiles }}
	ops, profile := hook.Mutate(context.Background(), pod.Namespace, pod)
	if ops == nil {
		return outcome{}
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("the webhook's patch %s: %v", patch, err)
	}
	if raw, err = p.Apply(raw); err != nil {
		t.Fatalf("applying the webhook's patch %s: %v", patch, err)
	}
	var created corev1.Pod
	if err := json.Unmarshal(raw, &created); err != nil {
		t.Fatal(err)
	}
	d := placement.Decide(&created, profiles, s)
	out := outcome{Fargate: true, Profile: profile, NoStart: len(d.StartFailures) > 0}
	for _, r := range d.Refusals {
		if id := byRefusal[r.Kind]; !slices.Contains(out.Refused, id) {
			out.Refused = append(out.Refused, id)
		}
	}
	slices.Sort(out.Refused)
	if (d.Event != "") != (len(out.Refused) > 0) && d.Profile != nil {
		t.Errorf("fargate-scheduler's event %q does not match its refusals %v", d.Event, out.Refused)
	}
	return out
}

// podOf is the pod a controller creates from an object's pod template.
func podOf(o *object.Object, ns string) *corev1.Pod {
	if p, ok := o.Typed.(*corev1.Pod); ok {
		pod := p.DeepCopy()
		pod.Namespace = ns
		return pod
	}
	tmpl := o.Pod.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.Namespace = ns
	if _, ok := o.Typed.(*appsv1.DaemonSet); ok {
		yes := true
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: o.Ref.Name, Controller: &yes}}
	}
	return pod
}

// agree runs both sides over objs and reports every disagreement.
func agree(t testing.TB, ctx *rules.Context, objs []*object.Object) {
	t.Helper()
	profiles := ctx.Profiles
	if profiles == nil {
		c := *ctx
		c.Profiles, profiles = catchAll, catchAll
		ctx = &c
	}
	got := checkSide(ctx, objs)
	for i, o := range objs {
		if o.Annotations[rules.IgnoreAnnotation] != "" {
			continue // the user silenced check on this object; the emulator still refuses
		}
		emu := emulatorSide(t, podOf(o, ctx.NamespaceOf(o.Ref)), profiles, ctx.Settings)
		if diff := cmp.Diff(got[i], emu); diff != "" {
			t.Errorf("%s:%d %s: check and the emulator disagree (-check +emulator):\n%s", o.Source.File, o.Source.Line, o.Ref, diff)
		}
	}
}

// TestParityRuleFixtures runs every rule fixture through both sides.
func TestParityRuleFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "pkg", "rules", "builtin", "testdata", "*", "*.yaml"))
	if err != nil || len(files) < 60 {
		t.Fatalf("rule fixtures: %d files, %v", len(files), err)
	}
	pods := 0
	for _, path := range files {
		if filepath.Base(filepath.Dir(path)) == "foundation" {
			continue // infrastructure code the fixtures' foundation directive reads, not manifests
		}
		fx, err := rulefixture.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		var objs []*object.Object
		manifest.Parse(path, fx.Data, func(o *object.Object) {
			if o.Pod != nil {
				objs = append(objs, o)
			}
		}, func(e manifest.Error) { t.Errorf("%s: %v", path, e) })
		pods += len(objs)
		agree(t, fx.Context, objs)
	}
	t.Logf("%d pod templates of %d fixtures agree", pods, len(files))
}

// TestParityForks are the cases where check and the emulator once forked:
// each must come out the same on both sides, under each setting.
func TestParityForks(t *testing.T) {
	yes := true
	apps := []fargate.Profile{{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-private1"}}}
	withDefaults := fargate.DefaultSettings()
	escalationRefused := withDefaults
	escalationRefused.RefusePrivilegeEscalation = true
	netAdmin := withDefaults
	netAdmin.AllowedCapabilities = []string{"NET_ADMIN"}
	for _, tc := range []struct {
		name     string
		pod      func(*corev1.Pod)
		settings fargate.Settings
		want     outcome
	}{
		{"privileged on the host network, node selector for EC2: the webhook ignores node selection", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.NodeSelector = map[string]string{fargate.ComputeTypeLabel: "ec2"}
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
		}, withDefaults, outcome{Fargate: true, Profile: "apps", Refused: []string{"FG003", "FG006", "FG023"}}},
		{"allowPrivilegeEscalation, by default", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &yes}
		}, withDefaults, outcome{Fargate: true, Profile: "apps"}},
		{"allowPrivilegeEscalation, refused by the settings", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &yes}
		}, escalationRefused, outcome{Fargate: true, Profile: "apps", Refused: []string{"FG005"}}},
		{"a capability the settings allow", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
		}, netAdmin, outcome{Fargate: true, Profile: "apps"}},
		{"a capability the default settings refuse", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
		}, withDefaults, outcome{Fargate: true, Profile: "apps", Refused: []string{"FG004"}}},
		{"a scheduler of its own", func(p *corev1.Pod) { p.Spec.SchedulerName = "volcano" }, withDefaults, outcome{}},
		{"a DaemonSet's pod", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", Controller: &yes}}
			p.Spec.HostNetwork = true
		}, withDefaults, outcome{Fargate: true, Profile: "apps", Refused: []string{"FG001"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "apps"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			tc.pod(pod)
			o := decodePod(t, pod)
			ctx := &rules.Context{Namespace: "default", TargetVersion: "1.35", Profiles: apps, Settings: tc.settings}
			if diff := cmp.Diff(tc.want, checkSide(ctx, []*object.Object{o})[0]); diff != "" {
				t.Errorf("check (-want +got):\n%s", diff)
			}
			agree(t, ctx, []*object.Object{o})
		})
	}
}

// decodePod reads a pod as check reads a manifest.
func decodePod(t testing.TB, pod *corev1.Pod) *object.Object {
	t.Helper()
	data, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	o, err := object.Decode("v1", "Pod", data, object.Source{File: "pod.json", Line: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// fuzzProfiles exercise the matcher: a namespace, a wildcard with a label,
// and a label-only catch-all.
var fuzzProfiles = []fargate.Profile{
	{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-private1"}},
	{Name: "web", Selectors: []fargate.Selector{{Namespace: "web-*", Labels: map[string]string{"app": "web?"}}}, Subnets: []string{"subnet-private2"}},
	{Name: "zz-opt-in", Selectors: []fargate.Selector{{Namespace: "*", Labels: map[string]string{"fargate": "yes"}}}, Subnets: []string{"subnet-private3"}},
}

// FuzzParity sends pods, as JSON, through both sides, under the default
// settings and with privilege escalation refused and NET_ADMIN allowed.
func FuzzParity(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "pkg", "rules", "builtin", "testdata", "*", "*.yaml"))
	for _, path := range files {
		if filepath.Base(filepath.Dir(path)) == "foundation" {
			continue // infrastructure code the fixtures' foundation directive reads, not manifests
		}
		fx, err := rulefixture.Read(path)
		if err != nil {
			f.Fatal(err)
		}
		manifest.Parse(path, fx.Data, func(o *object.Object) {
			if o.Pod != nil {
				if data, err := json.Marshal(podOf(o, "apps")); err == nil {
					f.Add(data)
				}
			}
		}, func(manifest.Error) {})
	}
	other := fargate.DefaultSettings()
	other.RefusePrivilegeEscalation, other.AllowedCapabilities = true, []string{"NET_ADMIN"}
	f.Fuzz(func(t *testing.T, data []byte) {
		var pod corev1.Pod
		if err := json.Unmarshal(data, &pod); err != nil {
			return
		}
		pod.APIVersion, pod.Kind = "v1", "Pod"
		if pod.Name == "" {
			pod.Name = "p"
		}
		o := decodePod(t, &pod)
		for _, s := range []fargate.Settings{fargate.DefaultSettings(), other} {
			ctx := &rules.Context{Namespace: "default", TargetVersion: "1.35", Profiles: fuzzProfiles, Settings: s}
			agree(t, ctx, []*object.Object{o})
		}
	})
}
