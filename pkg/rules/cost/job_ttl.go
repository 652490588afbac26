package cost

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// JobTTL flags Fargate Jobs and CronJobs whose finished pods are never cleaned up.
var JobTTL = &rules.Rule{
	ID: "FG040", Name: "job-without-ttl", Category: rules.CategoryCost, Severity: rules.Warning,
	Summary: "A Fargate Job without ttlSecondsAfterFinished keeps its finished pods, and they are billed until deleted.",
	Doc: "Fargate bills a pod from image pull until the pod is deleted, and a finished Job keeps its pods. " +
		"Set `ttlSecondsAfterFinished` so that the Job and its pods are deleted once done. A CronJob whose history limits " +
		"are both 0 deletes finished Jobs itself and is not flagged.",
	Remediation: "Set `spec.ttlSecondsAfterFinished` on the Job (for a CronJob, in `spec.jobTemplate.spec`), e.g. 300.",
	Check: rules.OnFargate(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		switch t := obj.Typed.(type) {
		case *batchv1.Job:
			if t.Spec.TTLSecondsAfterFinished == nil {
				return []rules.Finding{rules.At(obj, "spec", "the Job has no ttlSecondsAfterFinished: its finished Fargate pods stay billed until deleted")}
			}
		case *batchv1.CronJob:
			if t.Spec.JobTemplate.Spec.TTLSecondsAfterFinished == nil && (!zero(t.Spec.SuccessfulJobsHistoryLimit) || !zero(t.Spec.FailedJobsHistoryLimit)) {
				return []rules.Finding{rules.At(obj, "spec.jobTemplate.spec",
					"the CronJob's Jobs have no ttlSecondsAfterFinished: the finished Fargate pods its history keeps (3 successful and 1 failed by default) stay billed")}
			}
		}
		return nil
	}),
}

func zero(p *int32) bool { return p != nil && *p == 0 }
