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

// TestStages: the stream holds the two stages, each with the status
// template, indented as YAML wants it.
func TestStages(t *testing.T) {
	docs := strings.Split(string(Stages()), "\n---\n")
	var names []string
	for _, doc := range docs {
		var s struct {
			Kind     string
			Metadata struct{ Name string }
			Spec     struct {
				Weight int
				Next   struct{ StatusTemplate string }
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		names = append(names, s.Kind+"/"+s.Metadata.Name)
		if s.Spec.Weight != 1 || strings.TrimSpace(s.Spec.Next.StatusTemplate) != strings.TrimSpace(StatusTemplate()) {
			t.Errorf("%s: weight %d, status template:\n%s", s.Metadata.Name, s.Spec.Weight, s.Spec.Next.StatusTemplate)
		}
	}
	if diff := cmp.Diff([]string{"Stage/fargatekit-image-pull-error", "Stage/fargatekit-image-pull-backoff"}, names); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}

// render renders the status template against pod as KWOK does: the object
// as JSON, KWOK's Quote, and its address functions (here fixed addresses).
func render(t *testing.T, pod *corev1.Pod) corev1.PodStatus {
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
		"Quote":       func(s any) string { b, _ := json.Marshal(s); return string(b) },
		"NodeIPsWith": func(string) []string { return []string{"10.0.1.10"} },
		"PodIPsWith":  func(string, bool, string, string, string) []string { return []string{"10.0.1.10"} },
	}
	tpl, err := template.New("status").Funcs(funcs).Parse(StatusTemplate())
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

// TestStatusTemplate: the container that does not pull waits in
// ErrImagePull with the scheduler's message, then (the statuses written) in
// ImagePullBackOff; the others run, completed or wait for the init
// containers; the pod stays Pending and not Ready.
func TestStatusTemplate(t *testing.T) {
	const pullErr = `rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/nginx:1.27": dial tcp: i/o timeout`
	newPod := func(failing string, init ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: metav1.Now(),
			Annotations: map[string]string{"fargatekit.io/image-pull-container": failing, "fargatekit.io/image-pull-error": pullErr}},
			Spec:   corev1.PodSpec{NodeName: "fargate-ip-10-0-1-10.ec2.internal", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "proxy", Image: "envoy"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}
		for _, name := range init {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: name, Image: name + ":1"})
		}
		return p
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
			status := render(t, tt.pod)
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
			again := render(t, tt.pod)
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
			if diff := cmp.Diff(again, render(t, tt.pod)); diff != "" {
				t.Errorf("applied again (-before +after):\n%s", diff)
			}
		})
	}
}
