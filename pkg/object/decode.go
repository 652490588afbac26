package object

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Rollout is the part of an argoproj.io Rollout the rules read. The project
// does not depend on Argo Rollouts for one struct.
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas *int32                  `json:"replicas,omitempty"`
		Template *corev1.PodTemplateSpec `json:"template,omitempty"`
	} `json:"spec"`
}

// PodIdentityAssociation is the part of an ACK (eks.services.k8s.aws)
// PodIdentityAssociation the rules read.
type PodIdentityAssociation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		ClusterName    string `json:"clusterName,omitempty"`
		Namespace      string `json:"namespace,omitempty"`
		ServiceAccount string `json:"serviceAccount,omitempty"`
		RoleARN        string `json:"roleARN,omitempty"`
	} `json:"spec"`
}

type header struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

// kinds maps "group/Kind" to a constructor of the typed value. Groups are
// listed per kind because old API groups (extensions, apps/v1beta1) decode
// into the current types, which is what the rules need.
var kinds = map[string]func() any{
	"/Pod":                                        func() any { return &corev1.Pod{} },
	"/ReplicationController":                      func() any { return &corev1.ReplicationController{} },
	"/Service":                                    func() any { return &corev1.Service{} },
	"/Namespace":                                  func() any { return &corev1.Namespace{} },
	"/ConfigMap":                                  func() any { return &corev1.ConfigMap{} },
	"/PersistentVolume":                           func() any { return &corev1.PersistentVolume{} },
	"/PersistentVolumeClaim":                      func() any { return &corev1.PersistentVolumeClaim{} },
	"apps/Deployment":                             func() any { return &appsv1.Deployment{} },
	"extensions/Deployment":                       func() any { return &appsv1.Deployment{} },
	"apps/ReplicaSet":                             func() any { return &appsv1.ReplicaSet{} },
	"extensions/ReplicaSet":                       func() any { return &appsv1.ReplicaSet{} },
	"apps/StatefulSet":                            func() any { return &appsv1.StatefulSet{} },
	"apps/DaemonSet":                              func() any { return &appsv1.DaemonSet{} },
	"extensions/DaemonSet":                        func() any { return &appsv1.DaemonSet{} },
	"batch/Job":                                   func() any { return &batchv1.Job{} },
	"batch/CronJob":                               func() any { return &batchv1.CronJob{} },
	"argoproj.io/Rollout":                         func() any { return &Rollout{} },
	"networking.k8s.io/NetworkPolicy":             func() any { return &networkingv1.NetworkPolicy{} },
	"extensions/NetworkPolicy":                    func() any { return &networkingv1.NetworkPolicy{} },
	"networking.k8s.io/IngressClass":              func() any { return &networkingv1.IngressClass{} },
	"policy/PodDisruptionBudget":                  func() any { return &policyv1.PodDisruptionBudget{} },
	"eks.services.k8s.aws/PodIdentityAssociation": func() any { return &PodIdentityAssociation{} },
}

// ErrNotObject is Decode's error for JSON with neither apiVersion nor kind:
// not a Kubernetes object at all.
var ErrNotObject = errors.New("object has no apiVersion and kind")

// Decode builds an Object from one object's JSON. apiVersion and kind, when
// the caller already knows them, select the typed decoding so that the JSON
// is decoded once; empty, they are read from the JSON. The error says which
// field could not be decoded; the object is still returned with its Ref and
// metadata whenever those could be read. The object keeps none of data's
// bytes, nor apiVersion's or kind's: the caller may reuse them
// (TestDecodeKeepsNoInput).
func Decode(apiVersion, kind string, data []byte, src Source, lines Lines) (*Object, error) {
	return decode(apiVersion, kind, data, src, lines, decodeOptions)
}

// DecodeChecked is Decode for data its caller has checked: no string or
// number in it is a quantity of an ExtremeExponent (the fast YAML parser
// checks every value it reads; keys are never quantities). It does without
// checking each quantity as it is decoded, which costs a look-up for every
// value decoded (5% of a check).
func DecodeChecked(apiVersion, kind string, data []byte, src Source, lines Lines) (*Object, error) {
	return decode(apiVersion, kind, data, src, lines, checkedOptions)
}

func decode(apiVersion, kind string, data []byte, src Source, lines Lines, opts json.Options) (*Object, error) {
	ref := Ref{APIVersion: apiVersion, Kind: kind}
	if apiVersion != "" && kind != "" {
		if typed, err := decodeTyped(ref, data, opts); err == nil && typed != nil {
			return newObject(typed.(typedObject), src, lines, typed), nil
		}
	}
	// An unknown kind, or a typed decoding that failed: read the header alone.
	var h header
	if err := unmarshal(data, &h, opts); err != nil {
		return nil, err
	}
	if h.APIVersion == "" && h.Kind == "" {
		return nil, ErrNotObject
	}
	var missing []string
	if h.APIVersion == "" {
		missing = append(missing, "apiVersion")
	}
	if h.Kind == "" {
		missing = append(missing, "kind")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("object has no %s", strings.Join(missing, " and "))
	}
	o := newObject(&h, src, lines, nil)
	if _, err := decodeTyped(o.Ref, data, opts); err != nil {
		return o, err // the typed decoding failed: say where
	}
	return o, nil
}

// typedObject is what every decoded kind offers: type and object metadata.
type typedObject interface {
	GetObjectKind() schema.ObjectKind
	metav1.Object
}

func newObject(meta typedObject, src Source, lines Lines, typed any) *Object {
	gvk := meta.GetObjectKind().GroupVersionKind()
	apiVersion, kind := gvk.GroupVersion().String(), gvk.Kind
	o := &Object{
		Ref:         Ref{APIVersion: apiVersion, Kind: kind, Namespace: meta.GetNamespace(), Name: cmp.Or(meta.GetName(), meta.GetGenerateName())},
		Source:      src,
		Labels:      meta.GetLabels(),
		Annotations: meta.GetAnnotations(),
		Lines:       lines,
		Typed:       typed,
	}
	if typed != nil {
		o.Pod = podTemplate(typed)
	}
	return o
}

// decodeTyped decodes the kinds the rules know into their Go types; nil for any other kind.
func decodeTyped(ref Ref, data []byte, opts json.Options) (any, error) {
	group := ref.Group()
	if ref.Kind == "Ingress" && (group == "extensions" || group == "networking.k8s.io") {
		return decodeIngress(ref, data, opts)
	}
	newT, ok := kinds[group+"/"+ref.Kind]
	if !ok {
		return nil, nil
	}
	v := newT()
	if err := unmarshal(data, v, opts); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeIngress returns a networking.k8s.io/v1 Ingress for every served
// version, converting the v1beta1 backend shape (serviceName/servicePort).
func decodeIngress(ref Ref, data []byte, opts json.Options) (any, error) {
	if !strings.HasSuffix(ref.APIVersion, "v1beta1") {
		v := &networkingv1.Ingress{}
		if err := unmarshal(data, v, opts); err != nil {
			return nil, err
		}
		return v, nil
	}
	old := &networkingv1beta1.Ingress{}
	if err := unmarshal(data, old, opts); err != nil {
		return nil, err
	}
	in := &networkingv1.Ingress{TypeMeta: old.TypeMeta, ObjectMeta: old.ObjectMeta}
	in.Spec.IngressClassName = old.Spec.IngressClassName
	in.Spec.DefaultBackend = convertBackend(old.Spec.Backend)
	for _, r := range old.Spec.Rules {
		nr := networkingv1.IngressRule{Host: r.Host}
		if r.HTTP != nil {
			nr.HTTP = &networkingv1.HTTPIngressRuleValue{}
			for _, p := range r.HTTP.Paths {
				nr.HTTP.Paths = append(nr.HTTP.Paths, networkingv1.HTTPIngressPath{Path: p.Path, Backend: *convertBackend(&p.Backend)})
			}
		}
		in.Spec.Rules = append(in.Spec.Rules, nr)
	}
	return in, nil
}

func convertBackend(b *networkingv1beta1.IngressBackend) *networkingv1.IngressBackend {
	if b == nil {
		return nil
	}
	if b.ServiceName == "" {
		return &networkingv1.IngressBackend{Resource: b.Resource}
	}
	port := networkingv1.ServiceBackendPort{Number: b.ServicePort.IntVal}
	if b.ServicePort.StrVal != "" {
		port = networkingv1.ServiceBackendPort{Name: b.ServicePort.StrVal}
	}
	return &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: b.ServiceName, Port: port}}
}

// FieldError is a decoding error at a field path of the object.
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("field %s: %v", e.Path, e.Err)
}

func (e *FieldError) Unwrap() error { return e.Err }

// decodeOptions make github.com/go-json-experiment/json (the implementation
// proposed as encoding/json/v2, a dependency of kube-openapi already, which
// decodes these types in half the time of encoding/json's) decode as
// sigs.k8s.io/json does for the Kubernetes API server: case-sensitively, a
// name given twice merged into the first as encoding/json merges, invalid
// UTF-8 replaced, base64 with line breaks. Quantities go through
// unmarshalQuantity.
var decodeOptions = json.JoinOptions(checkedOptions, json.WithUnmarshalers(json.UnmarshalFromFunc(unmarshalQuantity)))

// checkedOptions are decodeOptions for data with no quantity of an
// ExtremeExponent (DecodeChecked).
var checkedOptions = json.JoinOptions(
	jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true),
	jsonv1.MergeWithLegacySemantics(true), jsonv1.ParseBytesWithLooseRFC4648(true), jsonv1.FormatBytesWithLegacySemantics(true),
)

// unmarshal decodes data into v with decodeOptions or checkedOptions. Its
// errors give the JSON pointer of the value that failed, which becomes the
// field path.
func unmarshal(data []byte, v any, opts json.Options) error {
	err := json.Unmarshal(data, v, opts)
	if err == nil {
		return nil
	}
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return &FieldError{Err: err}
	}
	path := ""
	for tok := range se.JSONPointer.Tokens() {
		switch {
		case tok != "" && strings.Trim(tok, "0123456789") == "":
			path += "[" + tok + "]"
		case strings.ContainsAny(tok, "./[]"):
			path = Key(path, tok)
		default:
			path = join(path, tok)
		}
	}
	switch {
	case se.JSONKind == '0' && (errors.Is(se.Err, strconv.ErrRange) || errors.Is(se.Err, strconv.ErrSyntax)):
		// 3000000000 as an int32, 1.5 as an int
		return &FieldError{Path: path, Err: fmt.Errorf("cannot use a JSON number %s as %s", se.JSONValue, se.GoType)}
	case se.Err != nil:
		return &FieldError{Path: path, Err: se.Err}
	}
	return &FieldError{Path: path, Err: fmt.Errorf("cannot use a JSON %s as %s", kindName(se.JSONKind), se.GoType)}
}

// ExtremeExponent reports whether a resource quantity's text (as
// resource.ParseQuantity reads it) has an exponent of more than three
// digits, such as 1E-999999999: ParseQuantity takes minutes to read those,
// and resource sizes need two digits.
func ExtremeExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return false
	}
	digits := strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")
	return len(digits) > 3 && strings.Trim(digits, "0123456789") == ""
}

// unmarshalQuantity reads a resource.Quantity as its UnmarshalJSON does, but
// refuses at once one with an ExtremeExponent.
func unmarshalQuantity(dec *jsontext.Decoder, q *resource.Quantity) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	text := []byte(v)
	if v.Kind() == '"' { // UnmarshalJSON takes what is between the quotes, spaces trimmed, escapes as they are
		text = text[1 : len(text)-1]
	}
	// ParseQuantity refuses a backslash at once (and the e of an escape
	// such as \u001e is no exponent): Decode and DecodeChecked say the same.
	if bytes.IndexByte(text, '\\') < 0 && ExtremeExponent(string(bytes.TrimSpace(text))) {
		return fmt.Errorf("quantity %s: its exponent is out of range", v)
	}
	return q.UnmarshalJSON(v)
}

// kindName names a JSON kind as encoding/json's errors did.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "bool"
	case '{':
		return "object"
	case '[':
		return "array"
	case 'n':
		return "null"
	}
	return "value"
}

func podTemplate(typed any) *PodTemplate {
	one := func(p *int32) int {
		if p == nil {
			return 1
		}
		return int(*p)
	}
	switch t := typed.(type) {
	case *corev1.Pod:
		return &PodTemplate{Template: &corev1.PodTemplateSpec{ObjectMeta: t.ObjectMeta, Spec: t.Spec}, Replicas: 1}
	case *corev1.ReplicationController:
		if t.Spec.Template == nil {
			return nil
		}
		return &PodTemplate{Path: "spec.template", Template: t.Spec.Template, Replicas: one(t.Spec.Replicas)}
	case *appsv1.Deployment:
		return &PodTemplate{Path: "spec.template", Template: &t.Spec.Template, Replicas: one(t.Spec.Replicas)}
	case *appsv1.ReplicaSet:
		return &PodTemplate{Path: "spec.template", Template: &t.Spec.Template, Replicas: one(t.Spec.Replicas)}
	case *appsv1.StatefulSet:
		return &PodTemplate{Path: "spec.template", Template: &t.Spec.Template, Replicas: one(t.Spec.Replicas)}
	case *appsv1.DaemonSet:
		return &PodTemplate{Path: "spec.template", Template: &t.Spec.Template} // one per node: unknown here
	case *batchv1.Job:
		return &PodTemplate{Path: "spec.template", Template: &t.Spec.Template, Replicas: one(t.Spec.Parallelism)}
	case *batchv1.CronJob:
		return &PodTemplate{Path: "spec.jobTemplate.spec.template", Template: &t.Spec.JobTemplate.Spec.Template, Replicas: one(t.Spec.JobTemplate.Spec.Parallelism)}
	case *Rollout:
		if t.Spec.Template == nil {
			return nil // a Rollout with workloadRef: the referenced Deployment carries the template
		}
		return &PodTemplate{Path: "spec.template", Template: t.Spec.Template, Replicas: one(t.Spec.Replicas)}
	}
	return nil
}

// FromTyped builds an Object from a decoded value of a kind the rules know
// (a *corev1.Pod, *appsv1.Deployment, ...), such as one read from the API
// server, whose lists leave apiVersion and kind empty: they are set from
// apiVersion and kind. It returns nil for a value of a type the rules do not
// know.
func FromTyped(v any, apiVersion, kind string, src Source) *Object {
	meta, ok := v.(typedObject)
	if !ok {
		return nil
	}
	meta.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	return newObject(meta, src, nil, v)
}
