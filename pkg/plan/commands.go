package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
)

// Tool is what makes a change, for the commands of its safe sequence.
type Tool struct {
	// Cluster names the cluster in the commands.
	Cluster string
	// Terraform is true when a Terraform plan makes the change, false for
	// eksctl.
	Terraform bool
	// Config is the eksctl ClusterConfig of the profiles after the change.
	Config string
}

// Commands writes the safe sequence of r as commands and comments, for the
// tool that makes the change. It returns nil when the change creates and
// deletes no profile.
func Commands(r Result, t Tool) []string {
	safe := r.Safe
	if len(safe.Create)+len(safe.Bridges)+len(safe.Delete) == 0 {
		return nil
	}
	var out []string
	add := func(lines ...string) { out = append(out, lines...) }
	wait := func(name string) string {
		return fmt.Sprintf("aws eks wait fargate-profile-active --cluster-name %s --fargate-profile-name %s", t.Cluster, name)
	}
	if len(safe.Create)+len(safe.Bridges) > 0 {
		add("# Phase 1: create the new profiles, and remove nothing yet")
	}
	var waits []string
	if t.Terraform {
		var targets []string
		for _, c := range safe.Create {
			if c.Before == nil {
				targets = append(targets, fmt.Sprintf("-target='%s'", c.Address))
				waits = append(waits, wait(c.After.Name))
			} else {
				add(fmt.Sprintf("#   %s replaces %s by %s at one address, which -target cannot split: add %s as a new resource (another key or name), apply it here, and remove %s in phase 2",
					c.Address, c.Before.Name, c.After.Name, c.After.Name, c.Before.Name))
			}
		}
		if len(targets) > 0 {
			add("terraform apply " + strings.Join(targets, " "))
		}
	} else if len(safe.Create) > 0 {
		add(fmt.Sprintf("eksctl create fargateprofile -f %s   # creates the profiles of the file that do not exist yet", t.Config))
		for _, c := range safe.Create {
			waits = append(waits, wait(c.After.Name))
		}
	}
	add(waits...)
	for _, b := range safe.Bridges {
		add(fmt.Sprintf("# %s is deleted and created again under its name: the temporary profile %s, with its old selectors, carries its pods meanwhile",
			b.Old.Name, b.BridgeName()))
		if b.New.CreateBeforeDestroy {
			add(fmt.Sprintf("#   first set create_before_destroy = false for %s: EKS refuses the new %s while the old one exists (PL006)", b.New.Address, b.Old.Name))
		}
		add(createCommand(t.Cluster, b.BridgeName(), b.Old), wait(b.BridgeName()))
	}
	if len(safe.Move) > 0 {
		add("# Move the pods to the new profiles now, at the pace of their rollout (phase 2 would stop them all at once, ignoring PodDisruptionBudgets)")
		for _, w := range safe.Move {
			add(live.RestartCommand(w.NamespacedRef(), w.Labels))
		}
	}
	switch {
	case len(safe.Create)+len(safe.Bridges) == 0 && len(r.CoverageLost) > 0:
		add("# Nothing replaces the deleted profiles: the pods they placed leave Fargate for good (PL001, PL004)")
	case len(safe.Create)+len(safe.Bridges) == 0:
		add("# The remaining profiles cover what the deleted ones selected; deleting a profile stops its pods at once (PodDisruptionBudgets are ignored)")
	default:
		add("# Phase 2: once every new profile is ACTIVE, make the rest of the change")
	}
	if t.Terraform {
		add("terraform apply")
	} else {
		for _, c := range safe.Delete {
			add(fmt.Sprintf("eksctl delete fargateprofile --cluster %s --name %s --wait", t.Cluster, c.Before.Name))
		}
		for _, b := range safe.Bridges {
			add(fmt.Sprintf("eksctl delete fargateprofile --cluster %s --name %s --wait", t.Cluster, b.Old.Name))
		}
		if len(safe.Bridges) > 0 {
			add(fmt.Sprintf("eksctl create fargateprofile -f %s", t.Config))
		}
	}
	for _, b := range safe.Bridges {
		add(wait(b.New.After.Name),
			fmt.Sprintf("# %s sorts before %s, so it takes the restarted pods; then the temporary profile goes", b.New.After.Name, b.BridgeName()))
		for _, w := range r.Workloads {
			if w.Before.Where == OnFargate && w.Before.Profile == b.Old.Name {
				add(live.RestartCommand(w.NamespacedRef(), w.Labels))
			}
		}
		add(fmt.Sprintf("aws eks delete-fargate-profile --cluster-name %s --fargate-profile-name %s", t.Cluster, b.BridgeName()),
			fmt.Sprintf("aws eks wait fargate-profile-deleted --cluster-name %s --fargate-profile-name %s", t.Cluster, b.BridgeName()))
	}
	if len(safe.Restart) > 0 {
		add("# If the change already ran as planned: recreate the pods left off Fargate, so that EKS places them again")
		for _, w := range safe.Restart {
			add(live.RestartCommand(w.NamespacedRef(), w.Labels))
		}
	}
	return out
}

// createCommand is the AWS CLI call that creates a profile with p's
// selectors, subnets and pod execution role.
func createCommand(cluster, name string, p fargate.Profile) string {
	type selector struct {
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels,omitempty"`
	}
	sels := make([]selector, len(p.Selectors))
	for i, s := range p.Selectors {
		sels[i] = selector{s.Namespace, s.Labels}
	}
	js, _ := json.Marshal(sels)
	cmd := fmt.Sprintf("aws eks create-fargate-profile --cluster-name %s --fargate-profile-name %s --pod-execution-role-arn %s --selectors '%s'",
		cluster, name, cmp.Or(p.PodExecutionRoleARN, "<the pod execution role of "+p.Name+">"), js)
	if len(p.Subnets) > 0 {
		cmd += " --subnets " + strings.Join(p.Subnets, " ")
	}
	return cmd
}
