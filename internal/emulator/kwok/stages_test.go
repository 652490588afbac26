package kwok

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// stages reads the stream of Stages: each stage's name (Kind/name), weight,
// status template and whether it goes on to the next stage at once.
func stages(t *testing.T) (names []string, weights map[string]int, templates map[string]string, immediate map[string]bool) {
	t.Helper()
	weights, templates, immediate = map[string]int{}, map[string]string{}, map[string]bool{}
	for _, doc := range strings.Split(string(Stages()), "\n---\n") {
		var s struct {
			Kind     string
			Metadata struct{ Name string }
			Spec     struct {
				Weight             int
				ImmediateNextStage bool
				Next               struct{ StatusTemplate string }
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		names = append(names, s.Kind+"/"+s.Metadata.Name)
		weights[s.Metadata.Name], templates[s.Metadata.Name] = s.Spec.Weight, s.Spec.Next.StatusTemplate
		immediate[s.Metadata.Name] = s.Spec.ImmediateNextStage
	}
	return names, weights, templates, immediate
}

// TestStages: the stream holds the five stages, each of weight 1 (KWOK's
// own have 0), the image-pull and start-failure ones with their status
// templates, indented as YAML wants it. Only the first stage of a failing
// container goes on at once to the next stage (the back-off: a stale copy
// of the pod must not keep it there; image-pull-stages.yaml); the
// back-offs, which write the same status each time, must not, or they
// would play without end.
func TestStages(t *testing.T) {
	names, weights, templates, immediate := stages(t)
	if diff := cmp.Diff([]string{"Stage/fargatekit-fargate-pod-ready", "Stage/fargatekit-image-pull-error", "Stage/fargatekit-image-pull-backoff",
		"Stage/fargatekit-start-error", "Stage/fargatekit-start-backoff"}, names); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	for name, w := range weights {
		if w != 1 {
			t.Errorf("%s: weight %d", name, w)
		}
	}
	for name, want := range map[string]string{
		"fargatekit-image-pull-error": StatusTemplate(), "fargatekit-image-pull-backoff": StatusTemplate(),
		"fargatekit-start-error": StartFailureTemplate(), "fargatekit-start-backoff": StartFailureTemplate(),
	} {
		if strings.TrimSpace(templates[name]) != strings.TrimSpace(want) {
			t.Errorf("%s: status template:\n%s", name, templates[name])
		}
	}
	if diff := cmp.Diff(map[string]bool{"fargatekit-fargate-pod-ready": false, "fargatekit-image-pull-error": true, "fargatekit-image-pull-backoff": false,
		"fargatekit-start-error": true, "fargatekit-start-backoff": false}, immediate); diff != "" {
		t.Errorf("immediateNextStage (-want +got):\n%s", diff)
	}
}

// TestFargatePodReady: a Fargate pod runs with its node's address, not one
// of KWOK's pod range: podIP = hostIP; its containers run and its init
// containers completed, a sidecar (restartPolicy Always) running.
func TestFargatePodReady(t *testing.T) {
	_, _, templates, _ := stages(t)
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{NodeName: "fargate-ip-10-0-1-10.ec2.internal", SchedulerName: "fargate-scheduler",
			InitContainers: []corev1.Container{{Name: "migrate", Image: "migrate:1"}, {Name: "proxy", Image: "envoy", RestartPolicy: &always}},
			Containers:     []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	status := render(t, templates["fargatekit-fargate-pod-ready"], pod)
	if status.Phase != corev1.PodRunning || status.PodIP != "10.0.1.10" || status.HostIP != "10.0.1.10" ||
		len(status.PodIPs) != 1 || status.PodIPs[0].IP != "10.0.1.10" {
		t.Errorf("phase %s, pod IP %q %v, host IP %q", status.Phase, status.PodIP, status.PodIPs, status.HostIP)
	}
	if diff := cmp.Diff([]string{"migrate=Completed", "proxy=running"}, states(status.InitContainerStatuses)); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"app=running"}, states(status.ContainerStatuses)); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
}

// render renders a status template against pod as KWOK does: the object as
// JSON, KWOK's Now and Quote, and its address functions: the node's
// address, and for pods one of KWOK's pod range, which a Fargate pod must
// not get.
func render(t *testing.T, tmpl string, pod *corev1.Pod) corev1.PodStatus {
	t.Helper()
	data, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	var obj any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	funcs := template.FuncMap{
		"Now":         func() string { return "2026-11-25T07:00:00Z" },
		"Quote":       func(s any) string { b, _ := json.Marshal(s); return string(b) },
		"NodeIPsWith": func(string) []string { return []string{"10.0.1.10"} },
		"PodIPsWith":  func(string, bool, string, string, string) []string { return []string{"10.244.0.3"} },
	}
	tpl, err := template.New("status").Funcs(funcs).Parse(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tpl.Execute(&out, obj); err != nil {
		t.Fatal(err)
	}
	var status corev1.PodStatus
	if err := yaml.UnmarshalStrict(out.Bytes(), &status); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return status
}

// states summarises the containers' states: name=reason (waiting), running,
// or completed, with the waiting message when there is one.
func states(statuses []corev1.ContainerStatus) []string {
	var out []string
	for _, s := range statuses {
		switch {
		case s.State.Waiting != nil:
			out = append(out, s.Name+"="+s.State.Waiting.Reason+" "+s.State.Waiting.Message)
		case s.State.Running != nil:
			out = append(out, s.Name+"=running")
		case s.State.Terminated != nil:
			out = append(out, s.Name+"="+s.State.Terminated.Reason)
		}
	}
	return out
}

// markedPod is a Pending pod bound to a Fargate node, with the containers
// app and proxy, the init containers named, and the annotations with which
// fargate-scheduler marks it for a stage.
func markedPod(annotations map[string]string, policy corev1.RestartPolicy, init ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "u1", CreationTimestamp: metav1.Now(), Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: "fargate-ip-10-0-1-10.ec2.internal", RestartPolicy: policy,
			Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "proxy", Image: "envoy"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	for _, name := range init {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: name, Image: name + ":1"})
	}
	return p
}

// TestStatusTemplate: the container that does not pull waits in
// ErrImagePull with the scheduler's message, then (the statuses written) in
// ImagePullBackOff; the others run, completed or wait for the init
// containers; the pod stays Pending and not Ready.
func TestStatusTemplate(t *testing.T) {
	const pullErr = `rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/nginx:1.27": dial tcp: i/o timeout`
	newPod := func(failing string, init ...string) *corev1.Pod {
		return markedPod(map[string]string{"fargatekit.io/image-pull-container": failing, "fargatekit.io/image-pull-error": pullErr}, "", init...)
	}
	tests := []struct {
		name        string
		pod         *corev1.Pod
		init, apps  []string
		initialized corev1.ConditionStatus
		backoff     string
	}{
		{name: "app container", pod: newPod("app", "migrate"), init: []string{"migrate=Completed"},
			apps: []string{"app=ErrImagePull " + pullErr, "proxy=running"}, initialized: corev1.ConditionTrue,
			backoff: `app=ImagePullBackOff Back-off pulling image "nginx:1.27"`},
		{name: "init container", pod: newPod("setup", "migrate", "setup", "warm"),
			init:        []string{"migrate=Completed", "setup=ErrImagePull " + pullErr, "warm=PodInitializing "},
			apps:        []string{"app=PodInitializing ", "proxy=PodInitializing "},
			initialized: corev1.ConditionFalse,
			backoff:     `setup=ImagePullBackOff Back-off pulling image "setup:1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := render(t, StatusTemplate(), tt.pod)
			if diff := cmp.Diff(tt.init, states(status.InitContainerStatuses)); diff != "" {
				t.Errorf("init containers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.apps, states(status.ContainerStatuses)); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
			conditions := map[corev1.PodConditionType]corev1.ConditionStatus{}
			for _, c := range status.Conditions {
				conditions[c.Type] = c.Status
			}
			if status.Phase != corev1.PodPending || conditions[corev1.PodReady] != corev1.ConditionFalse ||
				conditions[corev1.PodInitialized] != tt.initialized || status.PodIP != "10.0.1.10" {
				t.Errorf("phase %s, conditions %v, pod IP %q", status.Phase, conditions, status.PodIP)
			}
			// The second stage: the statuses written, the container backs off,
			// and applying it again changes nothing.
			tt.pod.Status = status
			again := render(t, StatusTemplate(), tt.pod)
			var backoff []string
			for _, st := range states(append(again.InitContainerStatuses, again.ContainerStatuses...)) {
				if strings.Contains(st, "=ImagePullBackOff") {
					backoff = append(backoff, st)
				}
			}
			if diff := cmp.Diff([]string{tt.backoff}, backoff); diff != "" {
				t.Errorf("backing off (-want +got):\n%s", diff)
			}
			tt.pod.Status = again
			if diff := cmp.Diff(again, render(t, StatusTemplate(), tt.pod)); diff != "" {
				t.Errorf("applied again (-before +after):\n%s", diff)
			}
		})
	}
}

// TestStartFailureTemplate: the container that does not start fails with
// StartError and the runtime's error, then (the statuses written) waits in
// CrashLoopBackOff after a restart, the error kept as its last state; the
// other containers run (the pod Running, not Ready), or with a failing
// init container wait (the pod Pending); a pod that never restarts fails.
func TestStartFailureTemplate(t *testing.T) {
	const startErr = `failed to create containerd task: ... cpu.cfs_quota_us: invalid argument: unknown`
	newPod := func(failing string, policy corev1.RestartPolicy, init ...string) *corev1.Pod {
		return markedPod(map[string]string{"fargatekit.io/start-failure-container": failing, "fargatekit.io/start-failure-error": startErr}, policy, init...)
	}
	tests := []struct {
		name         string
		pod          *corev1.Pod
		init, apps   []string
		phase, later corev1.PodPhase
		backoff      string
	}{
		{name: "app container, behind a sidecar", pod: func() *corev1.Pod {
			p := newPod("app", corev1.RestartPolicyAlways, "migrate", "sidecar")
			p.Spec.InitContainers[1].RestartPolicy = new(corev1.ContainerRestartPolicyAlways)
			return p
		}(), init: []string{"migrate=Completed", "sidecar=running"},
			apps: []string{"app=StartError", "proxy=running"}, phase: corev1.PodRunning, later: corev1.PodRunning,
			backoff: "app=CrashLoopBackOff back-off 10s restarting failed container=app pod=web_apps(u1)"},
		{name: "init container", pod: newPod("setup", corev1.RestartPolicyAlways, "migrate", "setup", "warm"),
			init:  []string{"migrate=Completed", "setup=StartError", "warm=PodInitializing "},
			apps:  []string{"app=PodInitializing ", "proxy=PodInitializing "},
			phase: corev1.PodPending, later: corev1.PodPending,
			backoff: "setup=CrashLoopBackOff back-off 10s restarting failed container=setup pod=web_apps(u1)"},
		{name: "never restarted", pod: newPod("setup", corev1.RestartPolicyNever, "setup"),
			init: []string{"setup=StartError"}, apps: []string{"app=PodInitializing ", "proxy=PodInitializing "},
			phase: corev1.PodFailed},
		{name: "a container that exits", pod: func() *corev1.Pod {
			p := newPod("app", corev1.RestartPolicyAlways)
			p.Annotations["fargatekit.io/start-failure-error"], p.Annotations["fargatekit.io/start-failure-exit-code"] = "", "1"
			return p
		}(), apps: []string{"app=Error", "proxy=running"}, phase: corev1.PodRunning, later: corev1.PodRunning,
			backoff: "app=CrashLoopBackOff back-off 10s restarting failed container=app pod=web_apps(u1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := render(t, StartFailureTemplate(), tt.pod)
			if diff := cmp.Diff(tt.init, states(status.InitContainerStatuses)); diff != "" {
				t.Errorf("init containers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.apps, states(status.ContainerStatuses)); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
			for _, st := range append(status.InitContainerStatuses, status.ContainerStatuses...) {
				term := st.State.Terminated
				switch {
				case term == nil:
				case term.Reason == "StartError" && (term.Message != startErr || term.ExitCode != 128 || term.StartedAt.Unix() != 0):
					t.Errorf("%s: the runtime's refusal: terminated %+v", st.Name, term)
				case term.Reason == "Error" && (term.Message != "" || term.ExitCode != 1 || term.StartedAt.IsZero() || term.StartedAt.Unix() == 0):
					t.Errorf("%s: an exit: terminated %+v", st.Name, term)
				}
			}
			var ready corev1.ConditionStatus
			for _, c := range status.Conditions {
				if c.Type == corev1.PodReady {
					ready = c.Status
				}
			}
			if status.Phase != tt.phase || ready != corev1.ConditionFalse || status.PodIP != "10.0.1.10" {
				t.Errorf("phase %s (want %s), ready %s, pod IP %q", status.Phase, tt.phase, ready, status.PodIP)
			}
			if tt.backoff == "" {
				return // the back-off stage does not select it
			}
			tt.pod.Status = status
			again := render(t, StartFailureTemplate(), tt.pod)
			var backoff []string
			for _, st := range append(again.InitContainerStatuses, again.ContainerStatuses...) {
				if st.State.Waiting != nil && st.State.Waiting.Reason == "CrashLoopBackOff" {
					backoff = append(backoff, st.Name+"="+st.State.Waiting.Reason+" "+st.State.Waiting.Message)
					if last := st.LastTerminationState.Terminated; st.RestartCount != 1 || last == nil || last.Reason == "StartError" && last.Message != startErr || last.Reason == "Error" && last.ExitCode != 1 {
						t.Errorf("%s backing off: restarts %d, last state %+v", st.Name, st.RestartCount, st.LastTerminationState)
					}
				}
			}
			if diff := cmp.Diff([]string{tt.backoff}, backoff); diff != "" {
				t.Errorf("backing off (-want +got):\n%s", diff)
			}
			if again.Phase != tt.later {
				t.Errorf("backing off: phase %s, want %s", again.Phase, tt.later)
			}
			tt.pod.Status = again
			if diff := cmp.Diff(again, render(t, StartFailureTemplate(), tt.pod)); diff != "" {
				t.Errorf("applied again (-before +after):\n%s", diff)
			}
		})
	}
}
