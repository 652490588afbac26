package compat

import (
	"cmp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Annotations of the AWS Load Balancer Controller and the in-tree cloud provider.
const (
	lbTypeAnnotation        = "service.beta.kubernetes.io/aws-load-balancer-type"
	nlbTargetTypeAnnotation = "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type"
	albTargetTypeAnnotation = "alb.ingress.kubernetes.io/target-type"
	ingressClassAnnotation  = "kubernetes.io/ingress.class"
)

// nlbClasses are loadBalancerClass values of controllers that honour the NLB target-type annotation.
var nlbClasses = map[string]bool{"service.k8s.aws/nlb": true, "eks.amazonaws.com/nlb": true}

// albControllers are IngressClass controllers that provision ALBs.
var albControllers = map[string]bool{"ingress.k8s.aws/alb": true, "eks.amazonaws.com/alb": true}

// LoadBalancerInstanceTarget flags LoadBalancer Services whose targets would be instances.
var LoadBalancerInstanceTarget = &rules.Rule{
	ID: "FG017", Name: "load-balancer-instance-target", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "A LoadBalancer Service in instance target mode cannot reach Fargate pods.",
	Doc: "Fargate pods have no node port on an EC2 instance, so a load balancer can only reach them with IP targets. " +
		"The in-tree AWS cloud provider (Classic Load Balancer, or `aws-load-balancer-type: nlb`) always uses instance " +
		"targets, and so does the AWS Load Balancer Controller unless the Service says " +
		"`service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip` (with `aws-load-balancer-type: external` or " +
		"`loadBalancerClass: service.k8s.aws/nlb`), or uses the legacy `aws-load-balancer-type: nlb-ip`. " +
		"Services with a `loadBalancerClass` of another controller are not AWS load balancers and are not checked. " +
		"The rule fires when the Service selects a Fargate workload of the input. " + nodePortDoc,
	Unconfirmed: "With the AWS Load Balancer Controller's Service webhook enabled (its default since v2.5), a Service " +
		"without a class gets `service.k8s.aws/nlb`, so `nlb-target-type: ip` alone would mean IP targets. fargatekit cannot " +
		"see the cluster's controllers and asks for the explicit `aws-load-balancer-type: external`, which works either way.",
	Remediation: "Install the AWS Load Balancer Controller and annotate the Service with " +
		"`service.beta.kubernetes.io/aws-load-balancer-type: external` and " +
		"`service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip`.",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		for _, o := range c.Objects["Service"] {
			svc, ok := o.Typed.(*corev1.Service)
			if !ok || svc.Spec.Type != corev1.ServiceTypeLoadBalancer || !awsLoadBalancer(svc) || serviceIPTargets(svc) {
				continue
			}
			if names := fargateBackends(ctx, c, o, svc); len(names) > 0 {
				report(throughNodes(ctx, svc, rules.Warning, rules.At(o, "spec.type",
					"the load balancer uses instance targets, which cannot reach the Fargate pods of %s", strings.Join(names, ", "))))
			}
		}
	},
}

// NodePortService flags NodePort Services that select Fargate pods.
var NodePortService = &rules.Rule{
	ID: "FG061", Name: "node-port-service", Category: rules.CategoryFargate, Severity: rules.Warning,
	Summary: "A NodePort Service selects Fargate pods, which have no node port of their own.",
	Doc: "A node port is served by kube-proxy, a DaemonSet, which Fargate does not run: a Fargate node answers on no " +
		"node port, and the Service works only through its cluster IP. A warning; an information when the cluster has EC2 " +
		"nodes and the Service's `externalTrafficPolicy` is `Cluster` (their kube-proxy forwards the port to the Fargate " +
		"pods, one hop more). A Service that only backs ALB Ingresses with IP targets (EKS's own 2048 example) is not " +
		"reported: its node port is not the path. The rule fires when the Service selects a Fargate workload of the input.",
	Remediation: "Make it a ClusterIP Service, and reach it from outside through a load balancer with IP targets " +
		"(`alb.ingress.kubernetes.io/target-type: ip`, or `aws-load-balancer-nlb-target-type: ip`).",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		ipBackends := ipIngressBackends(ctx, c)
		for _, o := range c.Objects["Service"] {
			svc, ok := o.Typed.(*corev1.Service)
			if !ok || svc.Spec.Type != corev1.ServiceTypeNodePort || ipBackends[[2]string{ctx.NamespaceOf(o.Ref), o.Ref.Name}] {
				continue
			}
			if names := fargateBackends(ctx, c, o, svc); len(names) > 0 {
				report(throughNodes(ctx, svc, rules.Info, rules.At(o, "spec.type",
					"the node port cannot reach the Fargate pods of %s", strings.Join(names, ", "))))
			}
		}
	},
}

// ipIngressBackends are the Services (namespace, name) that back an ALB
// Ingress of the input with IP targets.
func ipIngressBackends(ctx *rules.Context, c *rules.Cluster) map[[2]string]bool {
	services := map[[2]string]*corev1.Service{}
	for _, o := range c.Objects["Service"] {
		if svc, ok := o.Typed.(*corev1.Service); ok {
			services[[2]string{ctx.NamespaceOf(o.Ref), o.Ref.Name}] = svc
		}
	}
	out := map[[2]string]bool{}
	for _, o := range c.Objects["Ingress"] {
		ing, ok := o.Typed.(*networkingv1.Ingress)
		if !ok || !isALB(ing, c.Objects["IngressClass"]) {
			continue
		}
		for _, name := range backendServices(ing) {
			key := [2]string{ctx.NamespaceOf(o.Ref), name}
			if svc := services[key]; svc != nil && targetType(ing, svc) == "ip" {
				out[key] = true
			}
		}
	}
	return out
}

// targetType is how an ALB registers a backend Service: the Service's
// annotation wins over the Ingress's; instance by default.
func targetType(ing *networkingv1.Ingress, svc *corev1.Service) string {
	return cmp.Or(svc.Annotations[albTargetTypeAnnotation], ing.Annotations[albTargetTypeAnnotation], "instance")
}

// nodePortDoc says when a path through node ports still reaches Fargate pods (FG017, FG018).
const nodePortDoc = "When the infrastructure code given with --profiles (or, in scan, the cluster) has EC2 nodes and the " +
	"Service's `externalTrafficPolicy` is `Cluster` (the default), kube-proxy on those nodes forwards the node port to " +
	"the Fargate pods: the path works with one hop more, and the finding is a warning. With `externalTrafficPolicy: " +
	"Local` only nodes that run one of the pods answer, and Fargate pods run on no EC2 node: a blocker. Without EC2 " +
	"nodes known (no infrastructure given: a Fargate-only cluster is assumed), a blocker."

// throughNodes judges a finding about traffic that reaches Fargate pods
// through node ports: the rule's severity, unless the cluster has EC2 nodes
// and the Service keeps externalTrafficPolicy Cluster, when kube-proxy on
// the EC2 nodes forwards it: then lower.
func throughNodes(ctx *rules.Context, svc *corev1.Service, lower rules.Severity, f rules.Finding) rules.Finding {
	switch {
	case ctx.Foundation == nil || !ctx.Foundation.HasCapacity():
	case svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal:
		f.Message += " (externalTrafficPolicy Local: only nodes that run one of the pods answer, and the EC2 nodes run none)"
	default:
		f.Severity = lower
		f.Message += " directly: the EC2 nodes' kube-proxy forwards to them, one hop more (externalTrafficPolicy Cluster)"
	}
	return f
}

// awsLoadBalancer reports whether AWS provisions the Service's load balancer:
// the in-tree provider takes Services without a class, the AWS Load Balancer
// Controller its own classes; any other class belongs to another controller.
func awsLoadBalancer(svc *corev1.Service) bool {
	return svc.Spec.LoadBalancerClass == nil || nlbClasses[*svc.Spec.LoadBalancerClass]
}

func serviceIPTargets(svc *corev1.Service) bool {
	a := svc.Annotations
	if a[lbTypeAnnotation] == "nlb-ip" {
		return true
	}
	class := ""
	if svc.Spec.LoadBalancerClass != nil {
		class = *svc.Spec.LoadBalancerClass
	}
	return a[nlbTargetTypeAnnotation] == "ip" && (a[lbTypeAnnotation] == "external" || nlbClasses[class])
}

// fargateBackends names the Fargate workloads a Service selects.
func fargateBackends(ctx *rules.Context, c *rules.Cluster, o *object.Object, svc *corev1.Service) []string {
	if len(svc.Spec.Selector) == 0 {
		return nil
	}
	var names []string
	for _, w := range c.Selected(ctx.NamespaceOf(o.Ref), labels.SelectorFromSet(svc.Spec.Selector)) {
		if w.Placement.Fargate {
			names = append(names, w.Ref.String())
		}
	}
	sort.Strings(names)
	return names
}

// IngressInstanceTarget flags ALB Ingresses whose backends would be instance targets.
var IngressInstanceTarget = &rules.Rule{
	ID: "FG018", Name: "ingress-instance-target", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "An ALB Ingress in instance target mode cannot reach Fargate pods.",
	Doc: "The AWS Load Balancer Controller registers instance targets (node ports) unless " +
		"`alb.ingress.kubernetes.io/target-type: ip` is set on the Ingress or on the backend Service (the Service's " +
		"annotation wins). Fargate pods can only be reached as IP targets. An Ingress counts as an ALB when its class is " +
		"`alb`, when its IngressClass in the input uses the controller `ingress.k8s.aws/alb` (or EKS Auto Mode's " +
		"`eks.amazonaws.com/alb`), or when it has the legacy annotation `kubernetes.io/ingress.class: alb`. " +
		"The rule fires for each backend Service of the input that selects a Fargate workload. " + nodePortDoc,
	Remediation: "Add `alb.ingress.kubernetes.io/target-type: ip` to the Ingress (or to the backend Services).",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		services := map[[2]string]*object.Object{}
		for _, o := range c.Objects["Service"] {
			services[[2]string{ctx.NamespaceOf(o.Ref), o.Ref.Name}] = o
		}
		for _, o := range c.Objects["Ingress"] {
			ing, ok := o.Typed.(*networkingv1.Ingress)
			if !ok || !isALB(ing, c.Objects["IngressClass"]) {
				continue
			}
			ns := ctx.NamespaceOf(o.Ref)
			for _, name := range backendServices(ing) {
				so := services[[2]string{ns, name}]
				if so == nil {
					continue
				}
				svc, ok := so.Typed.(*corev1.Service)
				if !ok {
					continue
				}
				target := targetType(ing, svc)
				if target == "ip" {
					continue
				}
				if names := fargateBackends(ctx, c, so, svc); len(names) > 0 {
					report(throughNodes(ctx, svc, rules.Warning, rules.At(o, "metadata.annotations",
						"backend Service %q is registered as %s targets, which cannot reach the Fargate pods of %s",
						name, target, strings.Join(names, ", "))))
				}
			}
		}
	},
}

func isALB(ing *networkingv1.Ingress, classes []*object.Object) bool {
	// The legacy annotation, when present, decides on its own: the API server
	// gives such Ingresses no default class.
	if class, ok := ing.Annotations[ingressClassAnnotation]; ok {
		return class == "alb"
	}
	name := ""
	if ing.Spec.IngressClassName != nil {
		name = *ing.Spec.IngressClassName
	}
	if name == "alb" {
		return true
	}
	for _, o := range classes {
		ic, ok := o.Typed.(*networkingv1.IngressClass)
		if !ok || !albControllers[ic.Spec.Controller] {
			continue
		}
		if ic.Name == name || (name == "" && ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true") {
			return true
		}
	}
	return false
}

// backendServices lists the Services an Ingress sends traffic to, without duplicates.
func backendServices(ing *networkingv1.Ingress) []string {
	seen := map[string]bool{}
	var out []string
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && !seen[b.Service.Name] {
			seen[b.Service.Name] = true
			out = append(out, b.Service.Name)
		}
	}
	add(ing.Spec.DefaultBackend)
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for i := range r.HTTP.Paths {
			add(&r.HTTP.Paths[i].Backend)
		}
	}
	return out
}
