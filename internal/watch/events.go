package watch

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// findingEvents records an Event on a workload when one of pkg/live's
// findings (what happened in the cluster, LV rules) appears on it, and one
// when it is resolved: a series per workload and rule, not an Event per
// analysis. check's rules, which say what a template is, stay in the
// metrics.
type findingEvents struct {
	recorder record.EventRecorder
	// open are the findings recorded and not resolved, by workload and rule.
	open map[openKey]open
}

type openKey struct {
	ref  object.Ref
	rule string
}

type open struct {
	obj     runtime.Object
	rule    *rules.Rule
	message string
}

func newFindingEvents(r record.EventRecorder) *findingEvents {
	return &findingEvents{recorder: r, open: map[openKey]open{}}
}

// publish records the Events of what changed since the last report.
func (e *findingEvents) publish(rep *report.Report) {
	if e.recorder == nil || rep.Cluster.Analysis == nil {
		return
	}
	typed := map[object.Ref]runtime.Object{}
	for _, st := range rep.Cluster.Analysis.Workloads {
		if obj, ok := st.Workload.Object.Typed.(runtime.Object); ok {
			typed[st.Workload.Object.Ref] = obj
		}
	}
	now := map[openKey]bool{}
	for _, f := range rep.Findings {
		obj := typed[f.Object]
		if obj == nil || !isLive(f.Rule) {
			continue
		}
		k := openKey{ref: f.Object, rule: f.Rule.ID}
		now[k] = true
		if _, ok := e.open[k]; ok {
			continue
		}
		message := f.Message
		if fix := f.Details[live.FixDetail]; fix != "" {
			message += ". Fix: " + fix
		}
		e.open[k] = open{obj: obj, rule: f.Rule, message: f.Message}
		e.recorder.Event(obj, corev1.EventTypeWarning, Reason(f.Rule), message)
	}
	for k, o := range e.open {
		if now[k] {
			continue
		}
		delete(e.open, k)
		if obj := typed[k.ref]; obj != nil { // a workload deleted gets no Event
			e.recorder.Event(obj, corev1.EventTypeNormal, Reason(o.rule)+"Resolved", "resolved: "+o.message)
		}
	}
}

// isLive reports whether a rule is one of pkg/live's.
func isLive(r *rules.Rule) bool {
	return slices.ContainsFunc(live.Rules, func(l *rules.Rule) bool { return l.ID == r.ID })
}

// Reason is the reason of a rule's Events: its name in UpperCamelCase,
// drift-off-fargate as DriftOffFargate.
func Reason(r *rules.Rule) string {
	var b strings.Builder
	for part := range strings.SplitSeq(r.Name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
