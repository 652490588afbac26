package eksapi

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fargatekit/fargatekit/pkg/deprecation"
	"github.com/fargatekit/fargatekit/pkg/eks"
)

// Insight statuses and the category of the insights the emulator computes.
const (
	InsightPassing = "PASSING"
	InsightWarning = "WARNING"
	InsightError   = "ERROR"

	UpgradeReadiness = "UPGRADE_READINESS"
)

// InsightFacts are what the upgrade insights are computed from, read from
// the cluster by the emulator.
type InsightFacts struct {
	// Kubelets maps each node to its kubelet's minor version.
	Kubelets map[string]string
	// Deprecated are the deprecated APIs that clients requested, from the
	// API server's apiserver_requested_deprecated_apis metric.
	Deprecated []DeprecatedRequest
}

// DeprecatedRequest is one series of apiserver_requested_deprecated_apis.
type DeprecatedRequest struct {
	Group, Version, Resource string
	// RemovedRelease is the minor version that removes it, "1.36"; "" when
	// none is planned.
	RemovedRelease string
}

// insightJSON is the Insight shape of the API; a summary leaves out the
// details.
type insightJSON struct {
	ID                      string             `json:"id"`
	Name                    string             `json:"name"`
	Category                string             `json:"category"`
	KubernetesVersion       string             `json:"kubernetesVersion"`
	LastRefreshTime         epochSeconds       `json:"lastRefreshTime"`
	LastTransitionTime      epochSeconds       `json:"lastTransitionTime"`
	Description             string             `json:"description"`
	InsightStatus           insightStatusJSON  `json:"insightStatus"`
	Recommendation          string             `json:"recommendation,omitempty"`
	AdditionalInfo          map[string]string  `json:"additionalInfo,omitempty"`
	Resources               []insightResource  `json:"resources,omitempty"`
	CategorySpecificSummary *categorySummaryJS `json:"categorySpecificSummary,omitempty"`
}

type insightStatusJSON struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

type insightResource struct {
	InsightStatus         insightStatusJSON `json:"insightStatus"`
	KubernetesResourceURI string            `json:"kubernetesResourceUri"`
}

type categorySummaryJS struct {
	DeprecationDetails []deprecationDetail `json:"deprecationDetails"`
}

type deprecationDetail struct {
	Usage                          string `json:"usage"`
	ReplacedWith                   string `json:"replacedWith,omitempty"`
	StopServingVersion             string `json:"stopServingVersion"`
	StartServingReplacementVersion string `json:"startServingReplacementVersion,omitempty"`
	ClientStats                    []any  `json:"clientStats"`
}

// kubeletSkew is the name of the kubelet version skew insight.
const kubeletSkew = "Kubelet version skew"

// insightNamespace makes the insights' IDs: the same insight keeps its ID.
var insightNamespace = uuid.MustParse("6f1d1a52-4c8e-4f0a-9d7c-0e6a1b2c3d4e")

// computeInsights computes the upgrade insights of a cluster at version for its
// next minor version (and deprecated APIs for the one after), as EKS names
// them: "Kubelet version skew" is ERROR while a node's kubelet is older
// than the control plane (EKS refuses the update for node groups, and by
// the upgrade policy for Fargate nodes); "Deprecated APIs removed in
// Kubernetes vX" is ERROR when clients requested APIs that the next version
// removes, WARNING for the version after. The wording of reasons and
// recommendations is composed (unconfirmed).
func computeInsights(version string, f InsightFacts, now time.Time) []insightJSON {
	next := eks.NextMinor(version)
	mk := func(name, kv, desc string) insightJSON {
		return insightJSON{
			ID: uuid.NewSHA1(insightNamespace, []byte(name+"/"+kv)).String(), Name: name, Category: UpgradeReadiness,
			KubernetesVersion: kv, LastRefreshTime: epochSeconds(now), LastTransitionTime: epochSeconds(now), Description: desc,
		}
	}
	skew := mk(kubeletSkew, next, "Checks for nodes whose kubelet is older than the control plane, which must be updated before the control plane moves on.")
	skew.Recommendation = "Update the managed node groups to the control plane's version, and recreate the Fargate pods on older kubelets."
	skew.Resources = []insightResource{}
	for _, n := range slices.Sorted(maps.Keys(f.Kubelets)) {
		if eks.CompareMinor(f.Kubelets[n], version) < 0 {
			skew.Resources = append(skew.Resources, insightResource{
				InsightStatus:         insightStatusJSON{InsightError, fmt.Sprintf("kubelet %s is older than the control plane's %s", f.Kubelets[n], version)},
				KubernetesResourceURI: "/api/v1/nodes/" + n,
			})
		}
	}
	skew.InsightStatus = insightStatusJSON{InsightPassing, "Every kubelet is on the control plane's version."}
	if len(skew.Resources) > 0 {
		skew.InsightStatus = insightStatusJSON{InsightError, fmt.Sprintf("%d node(s) run a kubelet older than the control plane's %s.", len(skew.Resources), version)}
	}
	out := []insightJSON{skew}
	for i, kv := range []string{next, eks.NextMinor(next)} {
		d := mk("Deprecated APIs removed in Kubernetes v"+kv, kv, fmt.Sprintf("Checks for usage of deprecated APIs that are scheduled for removal in Kubernetes v%s.", kv))
		d.Recommendation = "Move the clients and manifests that use them to the replacement API versions."
		details := []deprecationDetail{}
		for _, r := range f.Deprecated {
			if r.RemovedRelease != kv {
				continue
			}
			gv := strings.TrimPrefix(r.Group+"/"+r.Version, "/")
			usage := "/apis/" + gv + "/" + r.Resource
			if r.Group == "" {
				usage = "/api/" + r.Version + "/" + r.Resource
			}
			dd := deprecationDetail{Usage: usage, StopServingVersion: kv, ClientStats: []any{}}
			if api, ok := lookupResource(gv, r.Resource); ok {
				dd.ReplacedWith, dd.StartServingReplacementVersion = api.Replacement, api.ReplacementSince
			}
			details = append(details, dd)
		}
		d.CategorySpecificSummary = &categorySummaryJS{DeprecationDetails: details}
		d.InsightStatus = insightStatusJSON{InsightPassing, "No deprecated API usage detected."}
		if len(details) > 0 {
			status := InsightError
			if i > 0 {
				status = InsightWarning
			}
			d.InsightStatus = insightStatusJSON{status, fmt.Sprintf("Deprecated API usage detected: %d API(s) removed in v%s were requested.", len(details), kv)}
		}
		out = append(out, d)
	}
	return out
}

// lookupResource finds a deprecated API by group/version and resource (the
// kind's plural, as the metric names it, and as the API server derives it).
func lookupResource(gv, resource string) (deprecation.API, bool) {
	for _, api := range deprecation.All() {
		if api.GroupVersion != gv {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(schema.FromAPIVersionAndKind(gv, api.Kind))
		if plural.Resource == resource {
			return api, true
		}
	}
	return deprecation.API{}, false
}

// summary leaves out an insight's details, as ListInsights does.
func (i insightJSON) summary() insightJSON {
	i.Recommendation, i.AdditionalInfo, i.Resources, i.CategorySpecificSummary = "", nil, nil, nil
	return i
}

// listInsightsRequest is the body of ListInsights.
type listInsightsRequest struct {
	Filter *struct {
		Categories         []string `json:"categories"`
		KubernetesVersions []string `json:"kubernetesVersions"`
		Statuses           []string `json:"statuses"`
	} `json:"filter"`
	MaxResults *int   `json:"maxResults"`
	NextToken  string `json:"nextToken"`
}

func (s *Server) insights(w http.ResponseWriter, r *http.Request) ([]insightJSON, bool) {
	facts, err := s.cluster.InsightFacts(r.Context())
	if err != nil {
		s.writeError(w, errServer("reading the cluster for its insights: %v", err))
		return nil, false
	}
	return computeInsights(s.store.KubernetesVersion(), facts, s.store.clock.Now().UTC()), true
}

func (s *Server) listInsights(w http.ResponseWriter, r *http.Request, cluster string) {
	var req listInsightsRequest
	if !s.decode(w, r, &req) || !s.checkCluster(w, cluster) {
		return
	}
	q := url.Values{}
	if req.MaxResults != nil {
		q.Set("maxResults", fmt.Sprint(*req.MaxResults))
	}
	if req.NextToken != "" {
		q.Set("nextToken", req.NextToken)
	}
	limit, after, aerr := page(q)
	if aerr != nil {
		aerr.ClusterName = cluster
		s.writeError(w, aerr)
		return
	}
	all, ok := s.insights(w, r)
	if !ok {
		return
	}
	keep := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	byID := map[string]insightJSON{}
	var ids []string
	for _, in := range all {
		if f := req.Filter; f != nil && (!keep(f.Categories, in.Category) || !keep(f.KubernetesVersions, in.KubernetesVersion) || !keep(f.Statuses, in.InsightStatus.Status)) {
			continue
		}
		byID[in.ID] = in.summary()
		ids = append(ids, in.ID)
	}
	ids, next := paginate(ids, limit, after)
	list := []insightJSON{}
	for _, id := range ids {
		list = append(list, byID[id])
	}
	s.writeJSON(w, map[string]any{"insights": list, "nextToken": next})
}

func (s *Server) describeInsight(w http.ResponseWriter, r *http.Request, cluster, id string) {
	if !s.checkCluster(w, cluster) {
		return
	}
	all, ok := s.insights(w, r)
	if !ok {
		return
	}
	for _, in := range all {
		if in.ID == id {
			s.writeJSON(w, map[string]insightJSON{"insight": in})
			return
		}
	}
	// Composed after errClusterNotFound (unconfirmed).
	s.writeError(w, newAPIError(typeResourceNotFound, http.StatusNotFound, cluster, "", "No insight found for id: %s.", id))
}
