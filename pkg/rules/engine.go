package rules

import (
	"cmp"
	"hash/maphash"
	"iter"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// IgnoreAnnotation on an object suppresses the listed rules (IDs or names,
// comma-separated) for that object.
const IgnoreAnnotation = "fargatekit.io/ignore"

// retained are the kinds the cluster rules relate to workloads. They are
// small and few, so the engine keeps them whole until the end.
var retained = map[string]bool{
	"Service": true, "Ingress": true, "IngressClass": true, "NetworkPolicy": true,
	"PodDisruptionBudget": true, "PersistentVolumeClaim": true, "PersistentVolume": true, "PodIdentityAssociation": true,
	"Namespace": true,
}

// Cluster is everything the cluster rules see once all input was read.
type Cluster struct {
	// Workloads are the summaries of the pod-creating objects, in input order.
	Workloads *Workloads
	// Objects holds the retained objects by kind.
	Objects map[string][]*object.Object

	// byLabel indexes Workloads (by their number) by namespace and label
	// (key=value), and by namespace alone: built on the first Selected. Its
	// keys are hashes: Selected checks what it finds.
	byLabel map[uint64][]uint32
	seed    maphash.Seed
}

// Selected yields the workloads in namespace ns whose pod labels sel
// matches, in the order of Workloads, each with its number (its place in
// Workloads.All), which tells workloads apart where their summaries may be
// equal (two overlays of one base). It looks only at the workloads that
// carry one label sel requires (or, when sel requires none, at those of the
// namespace), so that rules relating many selectors to many workloads stay
// linear in the input.
func (c *Cluster) Selected(ns string, sel labels.Selector) iter.Seq2[int, *Workload] {
	return func(yield func(int, *Workload) bool) {
		if c.byLabel == nil {
			c.byLabel, c.seed = map[uint64][]uint32{}, maphash.MakeSeed()
			i := uint32(0)
			for w := range c.Workloads.All() {
				c.byLabel[c.key(w.Namespace)] = append(c.byLabel[c.key(w.Namespace)], i)
				for k, v := range w.Labels {
					c.byLabel[c.key(w.Namespace, k, v)] = append(c.byLabel[c.key(w.Namespace, k, v)], i)
				}
				i++
			}
		}
		candidates := c.byLabel[c.key(ns)]
		if reqs, selectable := sel.Requirements(); selectable {
			for _, r := range reqs {
				if r.Operator() == selection.Equals || r.Operator() == selection.DoubleEquals || r.Operator() == selection.In && r.Values().Len() == 1 {
					if list := c.byLabel[c.key(ns, r.Key(), r.Values().UnsortedList()[0])]; len(list) < len(candidates) {
						candidates = list
					}
				}
			}
		}
		for j, i := range candidates {
			// Read the buffer whole when the next candidate is in it too.
			whole := j+1 < len(candidates) && c.Workloads.keys[candidates[j+1]].chunk == c.Workloads.keys[i].chunk
			w := c.Workloads.at(int(i), whole)
			if w == nil {
				return // Workloads.Err says why
			}
			if w.Namespace == ns && sel.Matches(labels.Set(w.Labels)) && !yield(int(i), w) {
				return
			}
		}
	}
}

// key is the key of byLabel for a namespace and a label's key and value,
// or for the namespace alone.
func (c *Cluster) key(parts ...string) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, p := range parts {
		h.WriteString(p)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// objectKey tells objects apart: objects of one name in several files (an
// overlay per environment) are different objects.
type objectKey struct {
	ref  object.Ref
	file string
}

// Options change how the engine applies rules.
type Options struct {
	// Severity overrides a rule's severity, by rule ID.
	Severity map[string]Severity
	// Found, when set, is given each finding instead of the engine keeping
	// it, and Result's Findings is nil: the caller keeps and sorts them
	// (CompareFindings), on disk when they are too many to hold.
	Found func(Finding)
	// Spill, when set, keeps the workload summaries out of memory
	// (Workloads.Spill).
	Spill Spill
}

// Engine runs rules over a stream of objects. Add each object once; Result
// runs the cluster rules and returns everything found. The engine keeps a
// Workload summary per pod-creating object and the retained kinds, not the
// objects themselves.
type Engine struct {
	ctx      *Context
	object   []*Rule
	cluster  []*Rule
	opts     Options
	state    Cluster
	ignored  map[objectKey]map[string]bool
	findings []Finding
	// prepared holds what Prepare found, by object, until Add.
	prepared sync.Map
}

// NewEngine returns an engine that runs rules with ctx.
func NewEngine(ctx *Context, rules []*Rule, opts Options) *Engine {
	e := &Engine{ctx: ctx, opts: opts, ignored: map[objectKey]map[string]bool{}, state: Cluster{Workloads: &Workloads{Spill: opts.Spill}, Objects: map[string][]*object.Object{}}}
	for _, r := range rules {
		if r.CheckCluster != nil {
			e.cluster = append(e.cluster, r)
		} else {
			e.object = append(e.object, r)
		}
	}
	return e
}

// Prepare runs the per-object rules on obj ahead of Add, which then only
// records what they found. It may be called for several objects at once,
// from several goroutines (the rules and the Context are read, never
// written), so that the rules run where the objects are parsed, in
// parallel; Add stays one call at a time, in input order.
func (e *Engine) Prepare(obj *object.Object) {
	e.prepared.Store(obj, e.evaluate(obj))
}

// evaluation is what the per-object rules found on one object: its
// workload summary and the findings of the rules that found any, in rule
// order.
type evaluation struct {
	workload *Workload
	found    []found
}

// found is what one rule found.
type found struct {
	rule     *Rule
	findings []Finding
}

func (e *Engine) evaluate(obj *object.Object) evaluation {
	var ev evaluation
	if obj.Pod != nil {
		ev.workload = e.workload(obj)
	}
	for _, r := range e.object {
		var fs []Finding
		if r.Refusal != "" && ev.workload != nil {
			fs = refused(obj, ev.workload, r.Refusal)
		}
		if r.Check != nil {
			fs = append(fs, r.Check(e.ctx, obj, ev.workload)...)
		}
		if len(fs) > 0 {
			ev.found = append(ev.found, found{r, fs})
		}
	}
	return ev
}

// Add runs the per-object rules on obj (unless Prepare did) and records
// what they found and what the cluster rules need.
func (e *Engine) Add(obj *object.Object) {
	if v := obj.Annotations[IgnoreAnnotation]; v != "" {
		set := map[string]bool{}
		for _, k := range strings.Split(v, ",") {
			set[strings.TrimSpace(k)] = true
		}
		e.ignored[objectKey{obj.Ref, obj.Source.File}] = set
	}
	var ev evaluation
	if v, ok := e.prepared.LoadAndDelete(obj); ok {
		ev = v.(evaluation)
	} else {
		ev = e.evaluate(obj)
	}
	if ev.workload != nil {
		e.state.Workloads.Add(ev.workload)
	}
	for _, f := range ev.found {
		e.add(f.rule, f.findings)
	}
	if retained[obj.Ref.Kind] {
		e.state.Objects[obj.Ref.Kind] = append(e.state.Objects[obj.Ref.Kind], obj)
	}
}

func (e *Engine) workload(obj *object.Object) *Workload {
	tmpl := obj.Pod.Template
	ns := e.ctx.NamespaceOf(obj.Ref)
	w := &Workload{
		Ref:            obj.Ref,
		Source:         obj.Source,
		Namespace:      ns,
		Labels:         tmpl.Labels,
		Replicas:       obj.Pod.Replicas,
		Placement:      e.place(obj, ns),
		Sizing:         fargate.SizePod(&tmpl.Spec),
		ServiceAccount: cmp.Or(tmpl.Spec.ServiceAccountName, tmpl.Spec.DeprecatedServiceAccount, "default"),
	}
	for i, v := range tmpl.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			w.Claims = append(w.Claims, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			dv := DynamicVolume{Name: v.Name, Ephemeral: true, Line: obj.Line(object.Item(obj.Pod.SpecPath("volumes"), i) + ".ephemeral")}
			if t := v.Ephemeral.VolumeClaimTemplate; t != nil {
				dv.StorageClass = t.Spec.StorageClassName
			}
			w.DynamicVolumes = append(w.DynamicVolumes, dv)
		}
	}
	if sts, ok := obj.Typed.(*appsv1.StatefulSet); ok {
		for i, t := range sts.Spec.VolumeClaimTemplates {
			w.DynamicVolumes = append(w.DynamicVolumes, DynamicVolume{
				Name: t.Name, StorageClass: t.Spec.StorageClassName, Line: obj.Line(object.Item("spec.volumeClaimTemplates", i)),
			})
		}
	}
	if w.Placement.Fargate {
		var daemonSet bool
		switch t := obj.Typed.(type) {
		case *appsv1.DaemonSet:
			daemonSet = true
		case *corev1.Pod:
			daemonSet = fargate.DaemonSetPod(t.OwnerReferences)
		}
		w.Refusals = fargate.Refusals(&tmpl.Spec, w.Sizing, daemonSet, e.ctx.Settings)
		w.Unrequested = e.ctx.Price.Unrequested(w.Sizing)
	}
	if w.Runs() {
		w.HourlyCostUSD = e.ctx.Price.Hourly(w.Sizing.Provisioned, w.Sizing.EphemeralGiB) * float64(w.Replicas)
		if !RunsToCompletion(obj) {
			w.MonthlyCostUSD = e.ctx.Price.Monthly(w.Sizing.Provisioned, w.Sizing.EphemeralGiB, w.Replicas)
		}
	}
	return w
}

func (e *Engine) place(obj *object.Object, ns string) fargate.Placement {
	if e.ctx.Place != nil {
		return e.ctx.Place(obj, ns)
	}
	return fargate.Place(e.ctx.Profiles, ns, obj.Pod.Template)
}

// refused returns a blocker at the field of every refusal of the kind of a
// workload on Fargate, worded by the refusal's detail.
func refused(obj *object.Object, w *Workload, kind fargate.RefusalKind) []Finding {
	var out []Finding
	for _, r := range w.Refusals {
		if r.Kind != kind {
			continue
		}
		path := "kind" // the pod as a whole: the object's kind
		if r.Field != "" {
			path = obj.Pod.SpecPath(r.Field)
		}
		f := At(obj, path, "%s%s", r.Detail, Where(w))
		f.Severity = Blocker
		out = append(out, f)
	}
	return out
}

// RunsToCompletion reports whether the object's pods finish (Jobs, CronJobs,
// and bare Pods that never restart).
func RunsToCompletion(obj *object.Object) bool {
	switch t := obj.Typed.(type) {
	case *batchv1.Job, *batchv1.CronJob:
		return true
	case *corev1.Pod:
		return t.Spec.RestartPolicy == corev1.RestartPolicyNever || t.Spec.RestartPolicy == corev1.RestartPolicyOnFailure
	}
	return false
}

func (e *Engine) add(r *Rule, fs []Finding) {
	for _, f := range fs {
		e.addOne(r, f)
	}
}

func (e *Engine) addOne(r *Rule, f Finding) {
	f.Rule = r
	if f.Severity == 0 {
		f.Severity = r.Severity
	}
	if set := e.ignored[objectKey{f.Object, f.Source.File}]; set[f.Rule.ID] || set[f.Rule.Name] || set["all"] {
		return
	}
	if s, ok := e.opts.Severity[f.Rule.ID]; ok {
		f.Severity = s
	}
	if e.opts.Found != nil {
		e.opts.Found(f)
		return
	}
	e.findings = append(e.findings, f)
}

// Result is everything a run found.
type Result struct {
	Findings []Finding
	// Workloads are the summaries of the pod-creating objects; reports
	// read them Sorted, by file and line.
	Workloads *Workloads
}

// Result runs the cluster rules and returns the findings sorted by
// CompareFindings, and the workloads.
func (e *Engine) Result() *Result {
	for _, r := range e.cluster {
		r.CheckCluster(e.ctx, &e.state, func(f Finding) { e.addOne(r, f) })
	}
	slices.SortStableFunc(e.findings, CompareFindings)
	return &Result{Findings: e.findings, Workloads: e.state.Workloads}
}

// CompareFindings orders findings as reports list them: by file, line, rule
// and message. Sorts with it are stable, so that findings equal by it keep
// the order they were found in.
func CompareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(a.Source.File, b.Source.File),
		cmp.Compare(a.Source.Line, b.Source.Line),
		cmp.Compare(a.Rule.ID, b.Rule.ID),
		cmp.Compare(a.Message, b.Message),
	)
}
