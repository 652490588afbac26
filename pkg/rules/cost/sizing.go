package cost

import (
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// NoRequests flags Fargate pods that request neither CPU nor memory.
var NoRequests = &rules.Rule{
	ID: "FG041", Name: "no-resource-requests", Category: rules.CategoryCost, Severity: rules.Info,
	Summary: "The pod requests no CPU or memory, so Fargate gives it the smallest size, 0.25 vCPU and 0.5 GB.",
	Doc: "Fargate sizes a pod from its requests (limits stand in for missing requests). With none, the pod runs with " +
		"0.25 vCPU and 0.5 GB, including the 256 MB Fargate keeps for its own agents, whatever the application needs: " +
		"it may be throttled or killed for lack of memory.",
	Remediation: "Set CPU and memory requests on every container to what it needs; Fargate then rounds the pod up to the next size.",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		if !w.Sizing.NothingRequested {
			return nil
		}
		return []rules.Finding{rules.At(obj, obj.Pod.SpecPath("containers"), "no container requests CPU or memory: the pod gets 0.25vCPU 0.5GB")}
	}),
}

// wasteThreshold is the share of the paid size above which rounding is flagged.
const wasteThreshold = 1.0 / 3

// RoundingWaste flags pods that Fargate rounds up so far that a third of the bill is unused.
var RoundingWaste = &rules.Rule{
	ID: "FG042", Name: "rounding-waste", Category: rules.CategoryCost, Severity: rules.Warning,
	Summary: "Fargate rounds the pod up to a size of which more than a third is paid for and not requested.",
	Doc: "Fargate adds 256 MB to the pod's memory request and rounds up to the smallest valid vCPU and memory " +
		"combination, and bills that size. Requests just over a boundary (1.1 vCPU becomes 2 vCPU; 8 GB with 1 vCPU " +
		"becomes 2 vCPU and 9 GB) pay for capacity the pod never asked for. The rule compares the price of what is " +
		"requested (plus 256 MB) with the price of the provisioned size. Pods at the smallest size (0.25 vCPU, 0.5 GB) " +
		"are not flagged: no request could make them cheaper.",
	Remediation: "Adjust the requests to fit a size: the message names the provisioned size; requesting a little less " +
		"often drops the pod one size down, or requesting up to the provisioned size uses what is paid for anyway.",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		waste := w.Unrequested
		if waste <= wasteThreshold {
			return nil
		}
		return []rules.Finding{rules.At(obj, obj.Pod.SpecPath("containers"),
			"the pod requests %s (+256 MB) but Fargate provisions %s: %.0f%% of its price pays for capacity nobody requested",
			w.Sizing.Requested(), w.Sizing.Provisioned, waste*100)}
	}),
}
