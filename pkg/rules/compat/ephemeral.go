package compat

import (
	"math"
	"strconv"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// EphemeralStorage flags pods whose emptyDir volumes may hold more than the
// ephemeral storage Fargate gives them.
var EphemeralStorage = &rules.Rule{
	ID: "FG028", Name: "ephemeral-storage-short", Category: rules.CategoryFargate, Severity: rules.Warning,
	Summary: "The pod's emptyDir volumes may hold all the ephemeral storage Fargate gives it, or more: it is evicted when they fill.",
	Doc: "A Fargate pod has 20 GiB of ephemeral storage unless its containers request more with `ephemeral-storage` " +
		"(Fargate then provisions the requests, plus 10% and 5 GiB, up to 175 GiB; EKS user guide, \"Fargate storage\"). " +
		"emptyDir volumes on disk share it with the containers' writable layers and logs. When the sizeLimits of a " +
		"pod's emptyDir volumes add up to what the pod gets or more, the pod is evicted when they fill, although each " +
		"stays within its limit. Memory-backed emptyDirs count as memory, not storage. Requests above 175 GiB are refused " +
		"(FG016).",
	Remediation: "Request `ephemeral-storage` on a container for what the volumes need (Fargate adds 10% and 5 GiB; " +
		"storage above 20 GiB is billed), lower the sizeLimits, or use EFS for data that large.",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		if !w.Sizing.Fits {
			return nil // FG016
		}
		// Volumes that may fill the whole storage leave none to the
		// containers' writable layers and logs.
		mib := fargate.EmptyDirMiB(&obj.Pod.Template.Spec)
		if mib < w.Sizing.EphemeralGiB*1024 {
			return nil
		}
		return []rules.Finding{rules.At(obj, obj.Pod.SpecPath("volumes"),
			"its emptyDir volumes may hold %s, but Fargate gives the pod %d GiB of ephemeral storage%s%s",
			gib(mib), w.Sizing.EphemeralGiB, beyondMax(mib), rules.Where(w))}
	}),
}

// gib writes MiB as GiB, rounded up to a tenth: "30 GiB", "20.1 GiB".
func gib(mib int64) string {
	return strconv.FormatFloat(math.Ceil(float64(mib)/1024*10)/10, 'f', -1, 64) + " GiB"
}

// beyondMax says when no request could cover the volumes.
func beyondMax(mib int64) string {
	if mib > fargate.MaxEphemeralGiB*1024 {
		return ", and no request can give more than 175 GiB"
	}
	return ""
}
