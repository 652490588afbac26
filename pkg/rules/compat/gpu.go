package compat

import (
	"strings"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// acceleratorPrefixes are the extended resources of GPU and accelerator device
// plugins: every nvidia.com/ resource (gpu, gpu.shared, MIG slices such as
// mig-1g.5gb), AMD, Intel, Habana and AWS Neuron devices.
var acceleratorPrefixes = []string{"nvidia.com/", "amd.com/", "gpu.intel.com/", "habana.ai/", "aws.amazon.com/neuron"}

// acceleratorResource reports whether a resource name is a GPU or accelerator.
func acceleratorResource(name string) bool {
	if strings.HasSuffix(name, "/gpu") {
		return true
	}
	for _, p := range acceleratorPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// GPU flags containers that request GPUs or other accelerators.
var GPU = &rules.Rule{
	ID: "FG014", Name: "gpu", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "Fargate has no GPUs or other accelerators.",
	Doc: "Fargate offers CPU and memory only. A pod that requests `nvidia.com/gpu`, `amd.com/gpu`, AWS Neuron devices " +
		"or another accelerator (in requests or limits) never gets one there.",
	Remediation: "Run GPU workloads on EC2 node groups (GPU instances, Karpenter or EKS Auto Mode) and keep them out of every Fargate profile.",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		var out []rules.Finding
		for _, c := range obj.Pod.Containers() {
			for _, list := range []struct {
				field string
				names []string
			}{{"limits", names(c.Resources.Limits)}, {"requests", names(c.Resources.Requests)}} {
				for _, n := range list.names {
					if acceleratorResource(n) {
						out = append(out, rules.At(obj, c.Path(obj.Pod, object.Key("resources."+list.field, n)),
							"container %q asks for %s%s", c.Name, n, rules.Where(w)))
					}
				}
			}
		}
		return dedupe(out)
	}),
}

// dedupe keeps the first finding per message (limits and requests of the same resource).
func dedupe(fs []rules.Finding) []rules.Finding {
	seen := map[string]bool{}
	out := fs[:0]
	for _, f := range fs {
		if !seen[f.Message] {
			seen[f.Message] = true
			out = append(out, f)
		}
	}
	return out
}
