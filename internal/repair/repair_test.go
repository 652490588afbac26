package repair

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Node names of the tests.
const (
	ec2Node     = "ip-10-0-1-200.ec2.internal"
	fargateNode = "fargate-ip-10-0-1-10.ec2.internal"
)

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// rollout is how a workload's restart goes in a world.
type rollout struct {
	// rolling is how many reads of the workload after its restart find the
	// rollout in progress; each one steps the clock by a poll, as if the
	// controller took that long.
	rolling int
	// stuck, when set, changes what every read after the restart finds: a
	// rollout that fails or never ends.
	stuck func(runtime.Object)
	// newPod changes the new pods; nil leaves them running on Fargate.
	newPod func(*corev1.Pod)
	// waits, when set, is the message of the fargate-scheduler
	// FailedScheduling event of a new pod that the first read after the
	// restart finds Pending.
	waits string
}

// world is a cluster in client-go's fake clientset whose reactors play the
// workload controllers and EKS. Once a restarted workload is rolled out,
// its pods are replaced by two new ones.
type world struct {
	client *fake.Clientset
	clock  *testingclock.FakeClock
	// log is what the repair asked of the API server that shows its order:
	// "patch deployments apps/web", "list pods app=web", "delete pods apps/tool".
	log      []string
	rollouts map[string]*rollout // by workload name
	reads    map[string]int      // reads of a workload since its restart
}

// newWorld returns a world holding objs. rollouts says how the restart of
// each workload it names goes; the others roll out at once, their new pods
// on Fargate.
func newWorld(rollouts map[string]*rollout, objs ...runtime.Object) *world {
	w := &world{client: fake.NewClientset(objs...), clock: testingclock.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		rollouts: rollouts, reads: map[string]int{}}
	if w.rollouts == nil {
		w.rollouts = map[string]*rollout{}
	}
	w.client.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		w.log = append(w.log, fmt.Sprintf("patch %s %s/%s", p.GetResource().Resource, p.GetNamespace(), p.GetName()))
		if w.rollouts[p.GetName()] == nil {
			w.rollouts[p.GetName()] = &rollout{}
		}
		w.reads[p.GetName()] = 0
		return false, nil, nil
	})
	w.client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		w.log = append(w.log, fmt.Sprintf("delete pods %s/%s", d.GetNamespace(), d.GetName()))
		return false, nil, nil
	})
	w.client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		w.log = append(w.log, "list pods "+a.(k8stesting.ListAction).GetListRestrictions().Labels.String())
		return false, nil, nil
	})
	w.client.PrependReactor("get", "*", w.read)
	return w
}

// read plays the controller of a restarted Deployment or StatefulSet.
func (w *world) read(a k8stesting.Action) (bool, runtime.Object, error) {
	get := a.(k8stesting.GetAction)
	ns, name := get.GetNamespace(), get.GetName()
	n, restarted := w.reads[name]
	if !restarted {
		return false, nil, nil
	}
	r := w.rollouts[name]
	obj, err := w.client.Tracker().Get(a.GetResource(), ns, name)
	if err != nil {
		return true, nil, err
	}
	if r.waits != "" {
		if err := w.waiting(ns, name, r.waits); err != nil {
			return true, nil, err
		}
		r.waits = ""
	}
	obj = obj.DeepCopyObject()
	switch {
	case r.stuck != nil:
		r.stuck(obj)
		return true, obj, nil
	case n < r.rolling:
		w.reads[name]++
		switch o := obj.(type) {
		case *appsv1.Deployment:
			o.Status.UpdatedReplicas = 1
		case *appsv1.StatefulSet:
			o.Status.ReadyReplicas = 1
		}
		w.clock.Step(interval)
		return true, obj, nil
	case n == r.rolling:
		w.reads[name]++
		if err := w.replacePods(ns, name, r.newPod); err != nil {
			return true, nil, err
		}
	}
	return false, nil, nil
}

// replacePods deletes the pods labelled app=name and creates two new ones.
func (w *world) replacePods(ns, name string, change func(*corev1.Pod)) error {
	t := w.client.Tracker()
	list, err := t.List(podsGVR, corev1.SchemeGroupVersion.WithKind("Pod"), ns)
	if err != nil {
		return err
	}
	for _, p := range list.(*corev1.PodList).Items {
		if p.Labels["app"] == name {
			if err := t.Delete(podsGVR, ns, p.Name); err != nil {
				return err
			}
		}
	}
	for i := range 2 {
		p := pod(fmt.Sprintf("%s-new-%d", name, i), name, true)
		if change != nil {
			change(p)
		}
		if err := t.Add(p); err != nil {
			return err
		}
	}
	return nil
}

// waiting adds a new pod of app, Pending, with a FailedScheduling event of
// fargate-scheduler saying message.
func (w *world) waiting(ns, app, message string) error {
	p := pod(app+"-new-0", app, true)
	p.Spec.NodeName, p.Status.Phase, p.CreationTimestamp = "", corev1.PodPending, metav1.NewTime(w.clock.Now())
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name + ".1"}, Reason: "FailedScheduling", Type: corev1.EventTypeWarning,
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.Name, UID: p.UID}, Source: corev1.EventSource{Component: fargate.SchedulerName}, Message: message}
	if err := w.client.Tracker().Add(p); err != nil {
		return err
	}
	return w.client.Tracker().Add(e)
}

// pods lists the pods of the world as "name on node".
func (w *world) pods(t *testing.T) []string {
	t.Helper()
	list, err := w.client.CoreV1().Pods("apps").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name+" on "+p.Spec.NodeName)
	}
	return out
}

// deployment has two replicas, labelled app=name, rolled out.
func deployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template(name)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2},
	}
}

// statefulSet has two replicas, labelled app=name, rolled out.
func statefulSet(name string, strategy appsv1.StatefulSetUpdateStrategyType) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template(name), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: strategy}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, CurrentReplicas: 2,
			CurrentRevision: name + "-1", UpdateRevision: name + "-1"},
	}
}

func template(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
}

// pod runs, labelled app=app, on Fargate as EKS places it or on an EC2 node.
func pod(name, app string, onFargate bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: ec2Node, SchedulerName: corev1.DefaultSchedulerName, Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if onFargate {
		p.Spec.NodeName, p.Spec.SchedulerName = fargateNode, fargate.SchedulerName
	}
	return p
}

// onEC2 are a workload's two pods, drifted onto an EC2 node.
func onEC2(app string) []runtime.Object {
	return []runtime.Object{pod(app+"-0", app, false), pod(app+"-1", app, false)}
}

// drift is the drift of a workload, with scan's command.
func drift(obj runtime.Object) Drift {
	var o *object.Object
	switch t := obj.DeepCopyObject().(type) {
	case *appsv1.Deployment:
		o = object.FromTyped(t, "apps/v1", "Deployment", object.Source{})
	case *appsv1.StatefulSet:
		o = object.FromTyped(t, "apps/v1", "StatefulSet", object.Source{})
	case *batchv1.Job:
		o = object.FromTyped(t, "batch/v1", "Job", object.Source{})
	case *corev1.Pod:
		o = object.FromTyped(t, "v1", "Pod", object.Source{})
	}
	return Drift{Workload: &live.Workload{Object: o}, Command: live.RestartCommand(o.Ref, nil)}
}

// names are the drifts' workloads.
func names(ds []Drift) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Workload.Object.Ref.String())
	}
	return out
}

// TestRunOrder: Run repairs the drifts in their order, one at a time (the
// next restart waits until the previous workload's pods are checked), waits
// on the clock while a rollout is in progress, and leaves every pod on
// Fargate.
func TestRunOrder(t *testing.T) {
	web, db, api, tool := deployment("web"), statefulSet("db", appsv1.RollingUpdateStatefulSetStrategyType), deployment("api"), pod("tool", "tool", false)
	objs := []runtime.Object{web, db, api, tool}
	for _, app := range []string{"web", "db", "api"} {
		objs = append(objs, onEC2(app)...)
	}
	w := newWorld(map[string]*rollout{"web": {rolling: 2}, "db": {rolling: 1}}, objs...)
	var progress strings.Builder
	r := &Restarter{Client: w.client, Timeout: time.Minute, DeleteBarePods: true, Progress: &progress, Clock: w.clock}
	start := w.clock.Now()

	res, err := r.Run(context.Background(), []Drift{drift(web), drift(db), drift(api), drift(tool)})
	if err != nil {
		t.Fatal(err)
	}
	wantLog := []string{
		"patch deployments apps/web", "list pods app=web",
		"patch statefulsets apps/db", "list pods app=db",
		"patch deployments apps/api", "list pods app=api",
		"delete pods apps/tool",
	}
	if diff := cmp.Diff(wantLog, w.log); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	wantProgress := "[1/4] Deployment/apps/web: restarting… rolled out, checking the pods… on Fargate\n" +
		"[2/4] StatefulSet/apps/db: restarting… rolled out, checking the pods… on Fargate\n" +
		"[3/4] Deployment/apps/api: restarting… rolled out, checking the pods… on Fargate\n" +
		"[4/4] Pod/apps/tool: deleted\n"
	if diff := cmp.Diff(wantProgress, progress.String()); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if got, want := w.clock.Since(start), 3*interval; got != want {
		t.Errorf("waited %v on the clock, want %v (web's two polls and db's one)", got, want)
	}
	got := map[string][]string{"restarted": names(res.Restarted), "deleted": names(res.Deleted), "skipped": names(res.Skipped), "left": names(res.Left)}
	want := map[string][]string{"restarted": {"Deployment/apps/web", "StatefulSet/apps/db", "Deployment/apps/api"}, "deleted": {"Pod/apps/tool"},
		"skipped": nil, "left": nil}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	for _, p := range w.pods(t) {
		if !strings.HasSuffix(p, " on "+fargateNode) {
			t.Errorf("pod %s after the repair", p)
		}
	}
}

// TestRunFails: a restart that fails stops Run: the error names the
// workload and says what failed, and the workloads after it are left as
// they were.
func TestRunFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rollout *rollout
		// refuse, when set, answers the patch of web.
		refuse error
		// timeout bounds each workload's repair: the cases that time out
		// wait on it, since the fake clock never ticks for them.
		timeout  time.Duration
		wantErr  string
		wantIs   error
		progress string
		// wantLog are the requests made: none about api, and one look at
		// a rollout or pods that wait, since the clock never ticks.
		wantLog []string
		// undone: web's template is back as it was before the restart.
		undone bool
	}{
		{
			name:     "restart refused",
			refuse:   apierrors.NewForbidden(appsv1.Resource("deployments"), "web", errors.New("no RBAC")),
			wantErr:  `Deployment/apps/web: restarting Deployment/apps/web: deployments.apps "web" is forbidden: no RBAC`,
			progress: "restarting… failed\n",
			wantLog:  nil, // refused before the world saw it
		},
		{
			name: "rollout fails",
			rollout: &rollout{stuck: func(o runtime.Object) {
				d := o.(*appsv1.Deployment)
				d.Status.UpdatedReplicas = 1
				d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
			}},
			wantErr:  `Deployment/apps/web: waiting for the rollout (): deployment "web" exceeded its progress deadline (the restart is undone, as by kubectl rollout undo)`,
			progress: "restarting… undone… failed\n",
			wantLog:  []string{"patch deployments apps/web", "patch deployments apps/web"},
			undone:   true,
		},
		{
			name:     "rollout times out",
			rollout:  &rollout{stuck: func(o runtime.Object) { o.(*appsv1.Deployment).Status.UpdatedReplicas = 1 }},
			timeout:  10 * time.Millisecond,
			wantErr:  `Deployment/apps/web: waiting for the rollout (Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been updated...): context deadline exceeded (the restart is undone, as by kubectl rollout undo)`,
			wantIs:   context.DeadlineExceeded,
			progress: "restarting… undone… failed\n",
			wantLog:  []string{"patch deployments apps/web", "patch deployments apps/web"},
			undone:   true,
		},
		{
			name: "new pod refused",
			rollout: &rollout{waits: "Pod not supported on Fargate: fields not supported: HostNetwork",
				stuck: func(o runtime.Object) { o.(*appsv1.Deployment).Status.UpdatedReplicas = 1 }},
			// No timeout: the clock never ticks, only the refusal ends it.
			wantErr: `Deployment/apps/web: waiting for the rollout (Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been updated...): ` +
				"fargate-scheduler refused new pod web-new-0: Pod not supported on Fargate: fields not supported: HostNetwork (the restart is undone, as by kubectl rollout undo)",
			progress: "restarting… undone… failed\n",
			wantLog:  []string{"patch deployments apps/web", "list pods app=web", "patch deployments apps/web"},
			undone:   true,
		},
		{
			name: "new pod waits for an address",
			rollout: &rollout{waits: "InsufficientFreeAddressesInSubnet: no free address in subnet-0a",
				stuck: func(o runtime.Object) { o.(*appsv1.Deployment).Status.UpdatedReplicas = 1 }},
			timeout:  10 * time.Millisecond,
			wantErr:  `Deployment/apps/web: waiting for the rollout (Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been updated...): context deadline exceeded (the restart is undone, as by kubectl rollout undo)`,
			wantIs:   context.DeadlineExceeded,
			progress: "restarting… undone… failed\n",
			wantLog:  []string{"patch deployments apps/web", "patch deployments apps/web"},
			undone:   true,
		},
		{
			name:    "new pods off Fargate",
			rollout: &rollout{newPod: func(p *corev1.Pod) { p.Spec.NodeName, p.Spec.SchedulerName = ec2Node, corev1.DefaultSchedulerName }},
			// The parenthesis still holds the rollout's last word: the check
			// fails on its first look, before it has one of its own.
			wantErr: `Deployment/apps/web: the new pods are not all on Fargate (deployment "web" successfully rolled out): ` +
				"new pods run off Fargate: web-new-0 on " + ec2Node + ", web-new-1 on " + ec2Node,
			progress: "restarting… rolled out, checking the pods… failed\n",
			wantLog:  []string{"patch deployments apps/web", "list pods app=web"},
		},
		{
			name: "new pods never placed",
			rollout: &rollout{newPod: func(p *corev1.Pod) {
				p.Spec.NodeName, p.Status.Phase = "", corev1.PodPending
			}},
			timeout:  10 * time.Millisecond,
			wantErr:  "Deployment/apps/web: the new pods are not all on Fargate (web-new-0 Pending, web-new-1 Pending): context deadline exceeded",
			wantIs:   context.DeadlineExceeded,
			progress: "restarting… rolled out, checking the pods… failed\n",
			wantLog:  []string{"patch deployments apps/web", "list pods app=web"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web, api := deployment("web"), deployment("api")
			objs := append([]runtime.Object{web, api}, append(onEC2("web"), onEC2("api")...)...)
			w := newWorld(map[string]*rollout{"web": tc.rollout}, objs...)
			if tc.refuse != nil {
				w.client.PrependReactor("patch", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if a.(k8stesting.PatchAction).GetName() != "web" {
						return false, nil, nil
					}
					return true, nil, tc.refuse
				})
			}
			var progress strings.Builder
			r := &Restarter{Client: w.client, Timeout: time.Minute, Progress: &progress, Clock: w.clock}
			if tc.timeout > 0 {
				r.Timeout = tc.timeout
			}

			res, err := r.Run(context.Background(), []Drift{drift(web), drift(api)})
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("error %v\nwant        %s", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			if want := "[1/2] Deployment/apps/web: " + tc.progress; progress.String() != want {
				t.Errorf("progress %q, want %q", progress.String(), want)
			}
			if got, want := names(res.Left), []string{"Deployment/apps/web", "Deployment/apps/api"}; !cmp.Equal(got, want) {
				t.Errorf("left %v, want %v", got, want)
			}
			if len(res.Restarted)+len(res.Deleted)+len(res.Skipped) > 0 {
				t.Errorf("restarted %v, deleted %v, skipped %v: want none", names(res.Restarted), names(res.Deleted), names(res.Skipped))
			}
			if diff := cmp.Diff(tc.wantLog, w.log); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			obj, err := w.client.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), "apps", "web")
			if err != nil {
				t.Fatal(err)
			}
			_, restarted := obj.(*appsv1.Deployment).Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"]
			if tc.undone && restarted {
				t.Error("web's template still carries the restart: not undone")
			}
		})
	}
}

// TestRunSkips: a workload Run cannot restart is left as it was and said to
// be, and Run goes on to the next one.
func TestRunSkips(t *testing.T) {
	for _, tc := range []struct {
		name     string
		workload runtime.Object
		progress string
	}{
		{
			// A restart changes the template, and OnDelete waits for someone
			// to delete the pods: waiting for that rollout would time out.
			name:     "StatefulSet OnDelete",
			workload: statefulSet("db", appsv1.OnDeleteStatefulSetStrategyType),
			progress: "StatefulSet/apps/db: skipped: its update strategy is OnDelete, so a restart recreates no pod; delete its pods one at a time\n",
		},
		{
			// Its new pods would stay Pending: the workload would lose its
			// replicas on EC2 for nothing.
			name: "a Deployment Fargate refuses",
			workload: func() runtime.Object {
				d := deployment("agent")
				d.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
				return d
			}(),
			progress: `Deployment/apps/agent: skipped: Fargate would refuse its pods (container "app" is privileged): restarted, they would stay Pending and the workload short of replicas; fix its template first` + "\n",
		},
		{
			name: "a Recreate Deployment",
			workload: func() runtime.Object {
				d := deployment("single")
				d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
				return d
			}(),
			progress: "Deployment/apps/single: skipped: its strategy is Recreate, so a restart stops every pod before new ones start (an outage); --allow-recreate restarts it anyway\n",
		},
		{
			name:     "bare pod",
			workload: pod("tool", "tool", false),
			progress: "Pod/apps/tool: skipped: a bare pod (--delete-bare-pods deletes it, and nothing recreates it)\n",
		},
		{
			name: "Job",
			workload: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "report"},
				Spec: batchv1.JobSpec{Template: template("report")}},
			progress: "Job/apps/report: skipped: fix restarts Deployments and StatefulSets\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web := deployment("web")
			objs := append([]runtime.Object{tc.workload, web, pod("db-0", "db", false)}, onEC2("web")...)
			w := newWorld(nil, objs...)
			var progress strings.Builder
			r := &Restarter{Client: w.client, Timeout: time.Minute, Progress: &progress, Clock: w.clock}

			res, err := r.Run(context.Background(), []Drift{drift(tc.workload), drift(web)})
			if err != nil {
				t.Fatal(err)
			}
			want := "[1/2] " + tc.progress + "[2/2] Deployment/apps/web: restarting… rolled out, checking the pods… on Fargate\n"
			if diff := cmp.Diff(want, progress.String()); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			skipped := drift(tc.workload)
			if got := names(res.Skipped); !cmp.Equal(got, names([]Drift{skipped})) {
				t.Errorf("skipped %v, want %v", got, names([]Drift{skipped}))
			}
			if len(res.Skipped) == 1 && res.Skipped[0].Command != skipped.Command {
				t.Errorf("skipped with command %q, want %q", res.Skipped[0].Command, skipped.Command)
			}
			if _, why, _ := strings.Cut(tc.progress, "skipped: "); len(res.Skipped) == 1 && res.Skipped[0].Skipped != strings.TrimSuffix(why, "\n") {
				t.Errorf("skipped because %q, want %q", res.Skipped[0].Skipped, why)
			}
			if got := names(res.Restarted); !cmp.Equal(got, []string{"Deployment/apps/web"}) {
				t.Errorf("restarted %v, want web", got)
			}
			if diff := cmp.Diff([]string{"patch deployments apps/web", "list pods app=web"}, w.log); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDrifted: the drifted workloads come in the analysis' order
// (namespace, kind, name) with scan's command; workloads on Fargate, those
// no profile matches and those of other findings are not drifted.
func TestDrifted(t *testing.T) {
	snap := &live.Snapshot{
		Profiles: []fargate.Profile{{Name: "apps", Status: fargate.StatusActive, Selectors: []fargate.Selector{{Namespace: "a"}, {Namespace: "b"}}}},
		Nodes: []corev1.Node{
			{ObjectMeta: metav1.ObjectMeta{Name: ec2Node}},
			{ObjectMeta: metav1.ObjectMeta{Name: fargateNode, Labels: map[string]string{fargate.ComputeTypeLabel: "fargate"}}},
		},
	}
	// owned adds a workload with one pod, on Fargate or on the EC2 node.
	owned := func(ns, kind, name string, onFargate bool) {
		var o *object.Object
		switch kind {
		case "Deployment":
			d := deployment(name)
			d.Namespace, d.UID = ns, types.UID(ns+"-"+name)
			o = object.FromTyped(d, "apps/v1", kind, object.Source{})
		case "StatefulSet":
			s := statefulSet(name, appsv1.RollingUpdateStatefulSetStrategyType)
			s.Namespace, s.UID = ns, types.UID(ns+"-"+name)
			o = object.FromTyped(s, "apps/v1", kind, object.Source{})
		}
		p := pod(name+"-0", name, onFargate)
		p.Namespace, p.UID = ns, types.UID(ns+"-"+name+"-0")
		if o != nil {
			snap.Owners = append(snap.Owners, o)
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(ns + "-" + name), Controller: ptr.To(true)}}
		}
		snap.Pods = append(snap.Pods, *p)
	}
	owned("b", "Deployment", "web", false)
	owned("a", "StatefulSet", "db", false)
	owned("a", "Deployment", "web", false)
	owned("a", "Pod", "tool", false)
	owned("a", "Deployment", "api", true)  // on Fargate already
	owned("c", "Deployment", "web", false) // no profile selects c
	// On Fargate under a profile that is gone: restarting it helps too, but
	// that is another finding (LV002), not a drift.
	owned("a", "Deployment", "batch", true)
	snap.Pods[len(snap.Pods)-1].Labels[fargate.ProfileLabel] = "old"

	var got []string
	for _, d := range Drifted(snap) {
		got = append(got, d.Workload.Object.Ref.String()+": "+d.Command)
	}
	want := []string{
		"Deployment/a/web: kubectl rollout restart -n a deployment/web && kubectl rollout status -n a deployment/web",
		"Pod/a/tool-0: # Pod a/tool-0: delete it and create it again",
		"StatefulSet/a/db: kubectl rollout restart -n a statefulset/db && kubectl rollout status -n a statefulset/db",
		"Deployment/b/web: kubectl rollout restart -n b deployment/web && kubectl rollout status -n b deployment/web",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drifted (-want +got):\n%s", diff)
	}
	// Of an analysis whose workloads were filtered, only the drifts of those
	// it lists.
	res := live.Analyze(snap, live.Options{})
	var kept []live.WorkloadState
	for _, st := range res.Workloads {
		if st.Workload.Object.Ref.Namespace == "b" {
			kept = append(kept, st)
		}
	}
	if ds := DriftsOf(kept, res.Findings); len(ds) != 1 || ds[0].Workload.Object.Ref.String() != "Deployment/b/web" {
		t.Errorf("drifts of the workloads of namespace b: %v", ds)
	}
}

// TestRunAllowRecreate: with AllowRecreate, a Recreate Deployment is
// restarted as any other (the near miss of its skip).
func TestRunAllowRecreate(t *testing.T) {
	d := deployment("single")
	d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	w := newWorld(nil, append([]runtime.Object{d}, onEC2("single")...)...)
	r := &Restarter{Client: w.client, Timeout: time.Minute, Clock: w.clock, AllowRecreate: true}
	res, err := r.Run(context.Background(), []Drift{drift(d)})
	if err != nil || len(res.Restarted) != 1 {
		t.Errorf("restarted %v, error %v; want single restarted", names(res.Restarted), err)
	}
}
