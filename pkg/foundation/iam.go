package foundation

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// FargatePrincipal is the service principal a pod execution role must trust:
// without it EKS refuses CreateFargateProfile.
const FargatePrincipal = "eks-fargate-pods.amazonaws.com"

// PodExecutionPolicy is the name of the AWS managed policy that lets Fargate
// pull images from Amazon ECR for the pods (EKS's own add-on images included).
const PodExecutionPolicy = "AmazonEKSFargatePodExecutionRolePolicy"

// MisconfiguredTrust is EKS's answer to a CreateFargateProfile whose pod
// execution role does not trust FargatePrincipal (InvalidParameterException).
const MisconfiguredTrust = "Misconfigured PodExecutionRole Trust Policy; Please add the eks-fargate-pods.amazonaws.com Service Principal"

// Trust is what a role's trust policy grants Fargate.
type Trust struct {
	// Fargate is true when a statement allows FargatePrincipal to assume the role.
	Fargate bool
	// SourceARNs and SourceAccounts are the values of the aws:SourceArn and
	// aws:SourceAccount conditions of those statements: Fargate may assume
	// the role only for a profile whose ARN (account) one of them matches.
	SourceARNs, SourceAccounts []string
}

// statement is one statement of an IAM policy; the fields that may be a
// string or a list are read by oneOrMany.
type statement struct {
	Effect    string                                `json:"Effect"`
	Principal json.RawMessage                       `json:"Principal"`
	Action    json.RawMessage                       `json:"Action"`
	Condition map[string]map[string]json.RawMessage `json:"Condition"`
}

// ParseTrust reads a trust (assume-role) policy document: JSON, or JSON
// URL-encoded as IAM's GetRole returns it. An explicit Deny of
// sts:AssumeRole to Fargate wins over any Allow.
func ParseTrust(doc string) (Trust, error) {
	if t := strings.TrimSpace(doc); !strings.HasPrefix(t, "{") && strings.Contains(t, "%") {
		d, err := url.QueryUnescape(doc)
		if err != nil {
			return Trust{}, fmt.Errorf("URL-decoding the trust policy: %w", err)
		}
		doc = d
	}
	var policy struct {
		Statement json.RawMessage `json:"Statement"`
	}
	if err := json.Unmarshal([]byte(doc), &policy); err != nil {
		return Trust{}, fmt.Errorf("reading the trust policy: %w", err)
	}
	var list []statement
	if err := json.Unmarshal(policy.Statement, &list); err != nil {
		var one statement
		if err1 := json.Unmarshal(policy.Statement, &one); err1 != nil {
			return Trust{}, fmt.Errorf("reading the trust policy's Statement: %w", err)
		}
		list = []statement{one}
	}
	var t Trust
	var errs []error
	denied := false
	for i, st := range list {
		if st.Effect != "Allow" && st.Effect != "Deny" {
			continue
		}
		principals, err := servicePrincipals(st.Principal)
		if err != nil {
			errs = append(errs, fmt.Errorf("Statement[%d].Principal: %w", i, err))
			continue
		}
		actions, err := oneOrMany(st.Action)
		if err != nil {
			errs = append(errs, fmt.Errorf("Statement[%d].Action: %w", i, err))
			continue
		}
		if !containsString(principals, FargatePrincipal) || !assumes(actions) {
			continue
		}
		if st.Effect == "Deny" {
			denied = true
			continue
		}
		t.Fargate = true
		for op, keys := range st.Condition {
			if strings.HasPrefix(op, "Null") {
				continue
			}
			for key, raw := range keys {
				values, err := oneOrMany(raw)
				if err != nil {
					errs = append(errs, fmt.Errorf("Statement[%d].Condition.%s.%s: %w", i, op, key, err))
					continue
				}
				switch strings.ToLower(key) {
				case "aws:sourcearn":
					t.SourceARNs = append(t.SourceARNs, values...)
				case "aws:sourceaccount":
					t.SourceAccounts = append(t.SourceAccounts, values...)
				}
			}
		}
	}
	if denied {
		t = Trust{}
	}
	return t, errors.Join(errs...)
}

// assumes reports whether actions include sts:AssumeRole.
func assumes(actions []string) bool {
	for _, a := range actions {
		if fargate.Wildcard(strings.ToLower(a), "sts:assumerole") {
			return true
		}
	}
	return false
}

// servicePrincipals reads the Service principals of a Principal element;
// "*" stands for every principal.
func servicePrincipals(raw json.RawMessage) ([]string, error) {
	var all string
	if json.Unmarshal(raw, &all) == nil {
		if all == "*" {
			return []string{FargatePrincipal}, nil
		}
		return nil, fmt.Errorf("%q is not a principal", all)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	if m["Service"] == nil {
		return nil, nil
	}
	return oneOrMany(m["Service"])
}

// oneOrMany reads a policy value that is a string or a list of strings.
func oneOrMany(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("neither a string nor a list of strings")
	}
	return many, nil
}

// ProfileARN is the ARN of a Fargate profile of cluster c, its unknown
// parts left empty; ID stands for the profile's generated suffix.
func (c Cluster) profileARN(profile string) [6]string {
	return [6]string{"arn", "", "eks", c.Region, c.Account, "fargateprofile/" + c.Name + "/" + profile + "/id"}
}

// Foreign returns the aws:SourceArn and aws:SourceAccount values that keep
// Fargate from assuming the role for profile of cluster c: all of them when
// none matches (the values of one condition key are alternatives), nil when
// one does or there is no condition. Unknown parts of the cluster (region,
// account) match anything.
func (t Trust) Foreign(c Cluster, profile string) []string {
	var bad []string
	if len(t.SourceARNs) > 0 && !matchesAny(t.SourceARNs, func(p string) bool { return arnLike(p, c.profileARN(profile)) }) {
		bad = append(bad, t.SourceARNs...)
	}
	if len(t.SourceAccounts) > 0 && c.Account != "" && !matchesAny(t.SourceAccounts, func(a string) bool { return a == c.Account }) {
		bad = append(bad, t.SourceAccounts...)
	}
	return bad
}

func matchesAny(values []string, match func(string) bool) bool {
	for _, v := range values {
		if match(v) {
			return true
		}
	}
	return false
}

// arnLike matches an ArnLike pattern component by component, as IAM does;
// an empty component of arn (unknown) matches anything.
func arnLike(pattern string, arn [6]string) bool {
	parts := strings.SplitN(pattern, ":", 6)
	if len(parts) != 6 {
		return false
	}
	for i, p := range parts {
		if arn[i] != "" && !fargate.Wildcard(p, arn[i]) {
			return false
		}
	}
	return true
}
