package spreadserver

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// WriteEksctl writes profiles as the fargateProfiles list of an eksctl
// ClusterConfig.
func WriteEksctl(w io.Writer, profiles []fargate.Profile) error {
	type selector struct {
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels,omitempty"`
	}
	type profile struct {
		Name                string     `json:"name"`
		PodExecutionRoleARN string     `json:"podExecutionRoleARN,omitempty"`
		Selectors           []selector `json:"selectors"`
		Subnets             []string   `json:"subnets"`
	}
	var doc struct {
		FargateProfiles []profile `json:"fargateProfiles"`
	}
	for _, p := range profiles {
		out := profile{Name: p.Name, PodExecutionRoleARN: p.PodExecutionRoleARN, Subnets: p.Subnets}
		for _, s := range p.Selectors {
			out.Selectors = append(out.Selectors, selector(s))
		}
		doc.FargateProfiles = append(doc.FargateProfiles, out)
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("writing eksctl YAML: %w", err)
	}
	_, err = w.Write(data)
	return err
}

// WriteTerraform writes profiles as aws_eks_fargate_profile resources of
// cluster. A profile without a pod execution role refers to the variable
// pod_execution_role_arn.
func WriteTerraform(w io.Writer, cluster string, profiles []fargate.Profile) error {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	for i, p := range profiles {
		if i > 0 {
			body.AppendNewline()
		}
		r := body.AppendNewBlock("resource", []string{"aws_eks_fargate_profile", resourceName(p.Name)}).Body()
		r.SetAttributeValue("cluster_name", cty.StringVal(cluster))
		r.SetAttributeValue("fargate_profile_name", cty.StringVal(p.Name))
		if p.PodExecutionRoleARN != "" {
			r.SetAttributeValue("pod_execution_role_arn", cty.StringVal(p.PodExecutionRoleARN))
		} else {
			r.SetAttributeTraversal("pod_execution_role_arn", hcl.Traversal{hcl.TraverseRoot{Name: "var"}, hcl.TraverseAttr{Name: "pod_execution_role_arn"}})
		}
		ids := make([]cty.Value, len(p.Subnets))
		for j, id := range p.Subnets {
			ids[j] = cty.StringVal(id)
		}
		r.SetAttributeValue("subnet_ids", cty.ListVal(ids))
		for _, s := range p.Selectors {
			sel := r.AppendNewBlock("selector", nil).Body()
			sel.SetAttributeValue("namespace", cty.StringVal(s.Namespace))
			if len(s.Labels) > 0 {
				labels := map[string]cty.Value{}
				for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
					labels[k] = cty.StringVal(s.Labels[k])
				}
				sel.SetAttributeValue("labels", cty.MapVal(labels))
			}
		}
	}
	_, err := f.WriteTo(w)
	return err
}

// WriteAWSCLI writes profiles as a shell script of AWS CLI commands that
// create them in cluster, each waited for before the next (EKS creates one
// profile at a time per cluster). A profile without a pod execution role
// takes the variable POD_EXECUTION_ROLE_ARN.
func WriteAWSCLI(w io.Writer, cluster string, profiles []fargate.Profile) error {
	type selector struct {
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels,omitempty"`
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# The per-AZ Fargate profiles of fargatekit spread, one at a time.\nset -e\n")
	for _, p := range profiles {
		role := `"${POD_EXECUTION_ROLE_ARN:?the pod execution role of the new profiles}"`
		if p.PodExecutionRoleARN != "" {
			role = shellQuote(p.PodExecutionRoleARN)
		}
		sel := make([]selector, len(p.Selectors))
		for i, s := range p.Selectors {
			sel[i] = selector(s)
		}
		selJSON, err := json.Marshal(sel)
		if err != nil {
			return fmt.Errorf("writing the selectors of %s: %w", p.Name, err)
		}
		quoted := make([]string, len(p.Subnets))
		for i, id := range p.Subnets {
			quoted[i] = shellQuote(id)
		}
		fmt.Fprintf(&b, "aws eks create-fargate-profile --cluster-name %s --fargate-profile-name %s \\\n  --pod-execution-role-arn %s --subnets %s \\\n  --selectors %s > /dev/null\n",
			shellQuote(cluster), shellQuote(p.Name), role, strings.Join(quoted, " "), shellQuote(string(selJSON)))
		fmt.Fprintf(&b, "aws eks wait fargate-profile-active --cluster-name %s --fargate-profile-name %s\n", shellQuote(cluster), shellQuote(p.Name))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shellQuote quotes s for sh when it holds anything but safe characters.
func shellQuote(s string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r)
	}
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !safe(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resourceName makes a Terraform resource name of a profile name.
func resourceName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
