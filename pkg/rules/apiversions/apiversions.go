package apiversions

import (
	"fmt"

	"github.com/fargatekit/fargatekit/pkg/deprecation"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// RemovedAPI flags objects whose API version the target version no longer serves.
var RemovedAPI = &rules.Rule{
	ID: "DEP001", Name: "removed-api", Category: rules.CategoryDeprecation, Severity: rules.Blocker,
	Summary: "The object's apiVersion is removed in or before the target Kubernetes version.",
	Doc: "The API server of the target version (`--target-version`, by default the newest EKS version in standard " +
		"support) does not serve this group/version for this kind: applying the manifest fails, and EKS Upgrade Insights " +
		"blocks the upgrade while such objects are in use. Only an object's own apiVersion counts; webhook or RBAC rules " +
		"that mention old versions are not findings. The data table covers Kubernetes 1.16 to today.",
	Remediation: "Move the object to the replacement API version and make the required changes named in the message.",
	Check: func(ctx *rules.Context, obj *object.Object, _ *rules.Workload) []rules.Finding {
		api, ok := deprecation.Lookup(obj.Ref.APIVersion, obj.Ref.Kind)
		if !ok || api.StatusAt(ctx.TargetVersion) != deprecation.Removed {
			return nil
		}
		msg := fmt.Sprintf("%s %s was removed in Kubernetes %s (target %s)", obj.Ref.APIVersion, obj.Ref.Kind, api.RemovedIn, ctx.TargetVersion)
		return []rules.Finding{finding(obj, api, msg)}
	},
}

// DeprecatedAPI flags objects whose API version is deprecated but still served by the target version.
var DeprecatedAPI = &rules.Rule{
	ID: "DEP002", Name: "deprecated-api", Category: rules.CategoryDeprecation, Severity: rules.Warning,
	Summary: "The object's apiVersion is deprecated in the target Kubernetes version and will be removed.",
	Doc: "The target version still serves this group/version but warns about it, and a later version removes it " +
		"(or, for core v1 Endpoints, discourages it). Migrating now avoids a blocked upgrade later.",
	Remediation: "Move the object to the replacement API version named in the message.",
	Check: func(ctx *rules.Context, obj *object.Object, _ *rules.Workload) []rules.Finding {
		api, ok := deprecation.Lookup(obj.Ref.APIVersion, obj.Ref.Kind)
		if !ok || api.StatusAt(ctx.TargetVersion) != deprecation.Deprecated {
			return nil
		}
		msg := fmt.Sprintf("%s %s is deprecated since Kubernetes %s", obj.Ref.APIVersion, obj.Ref.Kind, api.DeprecatedIn)
		if api.RemovedIn != "" {
			msg += " and removed in " + api.RemovedIn
		}
		return []rules.Finding{finding(obj, api, msg)}
	},
}

func finding(obj *object.Object, api deprecation.API, msg string) rules.Finding {
	details := map[string]string{}
	if api.DeprecatedIn != "" {
		details["deprecatedIn"] = api.DeprecatedIn
	}
	if api.RemovedIn != "" {
		details["removedIn"] = api.RemovedIn
	}
	if api.Replacement != "" {
		details["replacement"] = api.Replacement
		msg += fmt.Sprintf("; use %s (available since %s)", api.Replacement, api.ReplacementSince)
	} else {
		msg += "; it has no replacement"
	}
	if api.DefaultOff {
		msg += "; this version is alpha or off by default"
	}
	if api.Notes != "" {
		msg += ". " + api.Notes
	}
	f := rules.At(obj, "apiVersion", "%s", msg)
	f.Details = details
	return f
}
