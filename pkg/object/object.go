package object

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Source is where an object was read from. Line is 1-based; 0 means unknown.
type Source struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// Ref identifies an object the way kubectl does.
type Ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String renders the reference as Kind/namespace/name.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// Group returns the API group of the reference ("" for the core group).
func (r Ref) Group() string {
	if i := strings.IndexByte(r.APIVersion, '/'); i >= 0 {
		return r.APIVersion[:i]
	}
	return ""
}

// Lines resolves a field path such as "spec.template.spec.containers[0].image"
// to the line it stands on. Implementations return the line of the deepest
// existing ancestor when the path itself is absent, and 0 when nothing is known.
type Lines interface {
	Line(path string) int
}

// Object is one Kubernetes object read from the input, decoded as far as the
// rules need it. Unknown kinds and custom resources keep only Ref and metadata.
type Object struct {
	Ref         Ref
	Source      Source
	Labels      map[string]string
	Annotations map[string]string
	// Typed is the decoded object for kinds the rules know (for example
	// *appsv1.Deployment, *corev1.Service); nil for any other kind.
	Typed any
	// Pod is set for objects that create pods (Pod, Deployment, Job, ...).
	Pod *PodTemplate
	// Lines maps field paths to lines; may be nil.
	Lines Lines
}

// Line returns the line of a field path inside the object, falling back to
// the object's own line.
func (o *Object) Line(path string) int {
	if o.Lines != nil && path != "" {
		if l := o.Lines.Line(path); l > 0 {
			return l
		}
	}
	return o.Source.Line
}

// PodTemplate is the pod an object creates, normalised across kinds.
type PodTemplate struct {
	// Path is the field path of the pod template's object (the one holding
	// metadata and spec), "" for a Pod itself.
	Path string
	// Template is the template inside Typed (not a copy: copying it was
	// 3.4% of what a check allocates), or for a Pod its
	// metadata and spec; never nil.
	Template *corev1.PodTemplateSpec
	// Replicas is how many pods run at once at steady state (Deployment
	// replicas, Job parallelism); 1 when unset; 0 for DaemonSets (one per
	// node, which a manifest does not tell).
	Replicas int
}

// SpecPath returns the field path of a field of the pod spec, such as
// SpecPath("hostNetwork") → "spec.template.spec.hostNetwork".
func (p *PodTemplate) SpecPath(field string) string {
	return join(p.Path, "spec", field)
}

// ContainerPath returns the field path of a container field; init says whether
// the container is an init container.
func (p *PodTemplate) ContainerPath(init bool, i int, field string) string {
	list := "containers"
	if init {
		list = "initContainers"
	}
	return join(p.Path, "spec", fmt.Sprintf("%s[%d]", list, i), field)
}

// MetadataPath returns the field path of a field of the pod template metadata.
func (p *PodTemplate) MetadataPath(field string) string {
	return join(p.Path, "metadata", field)
}

// join joins the non-empty parts with dots, in one allocation.
func join(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// Container is a container of a pod template with its position.
type Container struct {
	*corev1.Container
	Init  bool
	Index int
}

// Containers lists init containers and then containers, with their positions.
func (p *PodTemplate) Containers() []Container {
	spec := &p.Template.Spec
	out := make([]Container, 0, len(spec.InitContainers)+len(spec.Containers))
	for i := range spec.InitContainers {
		out = append(out, Container{Container: &spec.InitContainers[i], Init: true, Index: i})
	}
	for i := range spec.Containers {
		out = append(out, Container{Container: &spec.Containers[i], Index: i})
	}
	return out
}

// Path returns the field path of a field of this container.
func (c Container) Path(p *PodTemplate, field string) string {
	return p.ContainerPath(c.Init, c.Index, field)
}

// Item returns the field path of element i of the list at path: Item("spec.volumes", 2) → "spec.volumes[2]".
func Item(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// Key returns the field path of a map key that may contain dots:
// Key("metadata.annotations", "eks.amazonaws.com/compute-type").
func Key(path, key string) string { return path + "[" + key + "]" }
