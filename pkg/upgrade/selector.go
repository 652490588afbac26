package upgrade

import (
	"cmp"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// MigrationSuffix names the temporary copy of a Deployment whose selector
// changes.
const MigrationSuffix = "-migrate"

// selectorChanges reports the workloads whose files select other pods than
// the live object does. spec.selector is immutable: `kubectl apply` fails,
// and `kubectl apply --force` deletes the workload and its pods before
// creating it again. It returns, for each, the steps that change it
// without taking it down.
func (a *analysis) selectorChanges(h *Hop) []Step {
	current := map[object.Ref]*object.Object{}
	for _, o := range a.f.Snapshot.Owners {
		current[key(o.Ref)] = o
	}
	var steps []Step
	for _, o := range a.f.Declared {
		if o.Source.File == "" {
			continue // a live object's own last-applied configuration
		}
		want, ok := selectorOf(o.Typed)
		if !ok {
			continue
		}
		cur, ok := current[key(o.Ref)]
		if !ok {
			continue
		}
		// As the API server compares them: the same selector written
		// otherwise (matchExpressions for matchLabels) is a change.
		have, ok := selectorOf(cur.Typed)
		if !ok || equality.Semantic.DeepEqual(want, have) {
			continue
		}
		ref := cur.Ref
		h.Issues = append(h.Issues, Issue{Kind: SelectorChange, Severity: Warning, Subject: subject(ref),
			Message: fmt.Sprintf("selects %s in %s but %s live: spec.selector is immutable, so kubectl apply fails, and kubectl apply --force deletes it and its pods before creating it again",
				format(want), where(o), format(have)),
			Fix: "change it without downtime: the steps below"})
		steps = append(steps, Step{Title: fmt.Sprintf("Change the selector of %s without taking it down", subject(ref)),
			Commands: a.selectorMigration(cur, o.Source.File)})
	}
	return steps
}

// selectorMigration returns the commands that replace a workload by the
// one of file, which selects other pods. A Deployment is copied under a
// temporary name first, so that pods keep serving while it is recreated; a
// StatefulSet or a DaemonSet (whose pods have names or nodes of their own)
// is deleted leaving its pods, and they are replaced one at a time.
func (a *analysis) selectorMigration(cur *object.Object, file string) []string {
	ns, name := cur.Ref.Namespace, cur.Ref.Name
	apply := cmp.Or(a.f.Apply[file], "kubectl apply -f "+file)
	kind := strings.ToLower(cur.Ref.Kind)
	if cur.Ref.Kind == "Deployment" {
		tmp := name + MigrationSuffix
		copyPatch := fmt.Sprintf(`{"metadata":{"name":%q,"uid":null,"resourceVersion":null,"creationTimestamp":null,"generation":null,"managedFields":null,"annotations":{"kubectl.kubernetes.io/last-applied-configuration":null}},"status":null}`, tmp)
		return []string{
			fmt.Sprintf("kubectl get deployment -n %s %s -o json | kubectl patch --local -f - --type merge -p '%s' -o json | kubectl create -f -", ns, name, copyPatch),
			fmt.Sprintf("kubectl rollout status -n %s deployment/%s", ns, tmp),
			fmt.Sprintf("kubectl delete deployment -n %s %s", ns, name),
			apply,
			fmt.Sprintf("kubectl rollout status -n %s deployment/%s", ns, name),
			fmt.Sprintf("kubectl delete deployment -n %s %s", ns, tmp),
		}
	}
	out := []string{
		fmt.Sprintf("kubectl delete %s -n %s %s --cascade=orphan", kind, ns, name),
		apply,
	}
	for _, p := range a.podsOf(cur.Ref) {
		out = append(out, fmt.Sprintf("kubectl delete pod -n %s %s && kubectl rollout status -n %s %s/%s", ns, p.Name, ns, kind, name))
	}
	return out
}

// podsOf returns the live pods of a workload.
func (a *analysis) podsOf(ref object.Ref) []*corev1.Pod {
	for _, w := range a.workloads {
		if key(w.Object.Ref) == key(ref) {
			var out []*corev1.Pod
			for _, p := range w.Pods {
				if live.Alive(p) {
					out = append(out, p)
				}
			}
			return out
		}
	}
	return nil
}

// key identifies an object across API versions; a file's object without a
// namespace goes to "default", as kubectl apply sends it with the default
// context.
func key(r object.Ref) object.Ref {
	return object.Ref{Kind: r.Kind, Namespace: cmp.Or(r.Namespace, "default"), Name: r.Name}
}

// selectorOf returns the selector of the workloads whose selector is
// immutable.
func selectorOf(typed any) (*metav1.LabelSelector, bool) {
	switch t := typed.(type) {
	case *appsv1.Deployment:
		return t.Spec.Selector, true
	case *appsv1.StatefulSet:
		return t.Spec.Selector, true
	case *appsv1.DaemonSet:
		return t.Spec.Selector, true
	}
	return nil, false
}

// format writes a selector as kubectl does.
func format(sel *metav1.LabelSelector) string {
	if s := metav1.FormatLabelSelector(sel); s != "<none>" {
		return s
	}
	return "no pod"
}

// where names the file and line of a declared object, or its
// last-applied configuration.
func where(o *object.Object) string {
	switch {
	case o.Source.Line > 0:
		return fmt.Sprintf("%s:%d", o.Source.File, o.Source.Line)
	case o.Source.File != "":
		return o.Source.File
	}
	return "its last-applied configuration"
}
