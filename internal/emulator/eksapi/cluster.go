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

	"github.com/fargatekit/fargatekit/pkg/eks"
)

// Statuses of the cluster and of updates, as the API writes them.
const (
	ClusterActive   = "ACTIVE"
	ClusterUpdating = "UPDATING"

	UpdateInProgress = "InProgress"
	UpdateSuccessful = "Successful"
	UpdateFailed     = "Failed"

	VersionUpdate = "VersionUpdate"
	ConfigUpdate  = "ConfigUpdate"
)

// ClusterState is the control plane as the Store keeps it.
type ClusterState struct {
	// Version is the Kubernetes minor version the control plane serves.
	Version         string `json:"version"`
	PlatformVersion string `json:"platformVersion"`
	// Status is ACTIVE, or UPDATING while Update runs; an UPDATING cluster
	// (whose control plane serves Target, with WithServedVersion)
	// becomes ACTIVE on Target Timings.ClusterUpdate after StatusSince.
	Status      string    `json:"status"`
	StatusSince time.Time `json:"statusSince"`
	Update      string    `json:"update,omitempty"`
	Target      string    `json:"target,omitempty"`
}

// UpdateState is an update of the control plane or of a node group.
type UpdateState struct {
	ID string `json:"id"`
	// Nodegroup is the node group updated; "" for the control plane.
	Nodegroup          string        `json:"nodegroupName,omitempty"`
	Type               string        `json:"type"`
	Status             string        `json:"status"`
	CreatedAt          time.Time     `json:"createdAt"`
	Params             []UpdateParam `json:"params"`
	Errors             []ErrorDetail `json:"errors"`
	ClientRequestToken string        `json:"clientRequestToken,omitempty"`
}

// UpdateParam is one parameter of an update, as the API writes it.
type UpdateParam struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// ErrorDetail is why an update failed, as the API writes it.
type ErrorDetail struct {
	ErrorCode    string   `json:"errorCode"`
	ErrorMessage string   `json:"errorMessage"`
	ResourceIDs  []string `json:"resourceIds"`
}

func (u *UpdateState) clone() UpdateState {
	c := *u
	c.Params = slices.Clone(u.Params)
	c.Errors = slices.Clone(u.Errors)
	return c
}

// seedCluster sets the control plane and node groups of the configuration,
// ACTIVE.
func (s *Store) seedCluster() {
	now := s.clock.Now().UTC()
	s.cluster = ClusterState{Version: s.cfg.KubernetesVersion, PlatformVersion: PlatformVersion, Status: ClusterActive, StatusSince: now}
	s.nodegroups, s.updates = nil, nil
	for _, ng := range s.cfg.NodeGroups {
		var subnets []string
		for _, az := range ng.AvailabilityZones {
			if sn, ok := s.cfg.VPC.Subnets.Private[az]; ok {
				subnets = append(subnets, sn.ID)
			}
		}
		s.nodegroups = append(s.nodegroups, NodegroupState{
			Name: ng.Name, ARN: s.nodegroupARN(ng.Name), CreatedAt: now, ModifiedAt: now,
			Status: NodegroupActive, StatusSince: now,
			Version: ng.KubeletVersion, ReleaseVersion: ng.ReleaseVersion,
			Scaling:       Scaling{MinSize: ng.MinSize, MaxSize: ng.MaxSize, DesiredSize: ng.DesiredCapacity},
			InstanceTypes: []string{ng.InstanceType}, Subnets: subnets, NodeRole: s.nodeRole(),
			AmiType: amiType(ng.InstanceType), CapacityType: "ON_DEMAND", DiskSize: 20,
			Labels: map[string]string{}, Tags: map[string]string{},
		})
	}
	s.sortNodegroups()
}

// checkLoaded checks the control plane and node groups read from the state
// file.
func (s *Store) checkLoaded() error {
	c := s.cluster
	if _, err := eks.ParseMinor(c.Version); err != nil {
		return fmt.Errorf("controlPlane.version: %w", err)
	}
	if c.Status != ClusterActive && (c.Status != ClusterUpdating || c.Update == "" || c.Target == "") {
		return fmt.Errorf("controlPlane: status %q with update %q to %q", c.Status, c.Update, c.Target)
	}
	seen := map[string]bool{}
	for i, ng := range s.nodegroups {
		switch {
		case ng.Name == "":
			return fmt.Errorf("node group %d has no name", i)
		case seen[ng.Name]:
			return fmt.Errorf("node group %q appears twice", ng.Name)
		}
		seen[ng.Name] = true
		switch ng.Status {
		case NodegroupCreating, NodegroupActive, NodegroupUpdating, NodegroupDeleting:
		default:
			return fmt.Errorf("node group %q has status %q", ng.Name, ng.Status)
		}
	}
	s.sortNodegroups()
	return nil
}

// tickClusterLocked applies the due transitions of the control plane and
// node groups; it reports whether there were any.
func (s *Store) tickClusterLocked(now time.Time) bool {
	changed := false
	t := s.cfg.Timings
	if c := &s.cluster; c.Status == ClusterUpdating && !now.Before(c.StatusSince.Add(t.ClusterUpdate.Duration)) &&
		(!s.waitServed || s.served == c.Target) {
		s.finishUpdateLocked(c.Update, nil)
		c.Version, c.PlatformVersion, c.Status, c.StatusSince = c.Target, PlatformVersion, ClusterActive, c.StatusSince.Add(t.ClusterUpdate.Duration)
		c.Update, c.Target = "", ""
		changed = true
	}
	kept := s.nodegroups[:0:0]
	for _, ng := range s.nodegroups {
		switch {
		case ng.Status == NodegroupCreating && !now.Before(ng.StatusSince.Add(t.NodegroupCreate.Duration)):
			ng.Status, ng.StatusSince = NodegroupActive, ng.StatusSince.Add(t.NodegroupCreate.Duration)
			changed = true
		case ng.Status == NodegroupDeleting && !now.Before(ng.StatusSince.Add(t.NodegroupDelete.Duration)):
			s.updates = slices.DeleteFunc(s.updates, func(u UpdateState) bool { return u.Nodegroup == ng.Name })
			changed = true
			continue
		}
		kept = append(kept, ng)
	}
	s.nodegroups = kept
	return changed
}

// finishUpdateLocked ends an update: Successful without errors, Failed with.
func (s *Store) finishUpdateLocked(id string, errs []ErrorDetail) {
	for i := range s.updates {
		if u := &s.updates[i]; u.ID == id {
			u.Status, u.Errors = UpdateSuccessful, []ErrorDetail{}
			if len(errs) > 0 {
				u.Status, u.Errors = UpdateFailed, errs
			}
		}
	}
}

// newUpdateLocked records an update in progress and returns it.
func (s *Store) newUpdateLocked(nodegroup, typ, token string, params ...UpdateParam) UpdateState {
	u := UpdateState{
		ID: uuid.NewString(), Nodegroup: nodegroup, Type: typ, Status: UpdateInProgress,
		CreatedAt: s.clock.Now().UTC(), Params: params, Errors: []ErrorDetail{}, ClientRequestToken: token,
	}
	s.updates = append(s.updates, u)
	return u.clone()
}

// tokenUpdateLocked returns the update made with a clientRequestToken, so
// that a repeated request returns it.
func (s *Store) tokenUpdateLocked(nodegroup, token string) (UpdateState, bool) {
	if token == "" {
		return UpdateState{}, false
	}
	for i := range s.updates {
		if u := &s.updates[i]; u.ClientRequestToken == token && u.Nodegroup == nodegroup {
			return u.clone(), true
		}
	}
	return UpdateState{}, false
}

// KubernetesVersion is the minor version the control plane serves, as of the
// last Tick or API call.
func (s *Store) KubernetesVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cluster.Version
}

// FailClusterUpdate ends the control plane's update in progress, if any, as
// Failed with errs: the cluster is ACTIVE again on the version it had.
func (s *Store) FailClusterUpdate(errs ...ErrorDetail) error {
	return s.update(func() (bool, error) {
		c := &s.cluster
		if c.Status != ClusterUpdating {
			return false, nil
		}
		s.finishUpdateLocked(c.Update, errs)
		c.Status, c.StatusSince, c.Update, c.Target = ClusterActive, s.clock.Now().UTC(), "", ""
		return true, nil
	})
}

// Serving records that the control plane serves version (WithServedVersion).
func (s *Store) Serving(version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served = version
}

// Cluster returns the control plane's state after applying due transitions.
func (s *Store) Cluster() ClusterState {
	var c ClusterState
	_ = s.update(func() (bool, error) { // read only: it cannot fail
		c = s.cluster
		return false, nil
	})
	return c
}

// updateVersionInput is an UpdateClusterVersion request.
type updateVersionInput struct {
	Version            string `json:"version"`
	ClientRequestToken string `json:"clientRequestToken"`
	Force              bool   `json:"force"`
}

// updateClusterVersion starts moving the control plane to the next minor
// version, after EKS's checks in this order: idempotency, an update in
// progress, the version itself, node groups behind, Fargate nodes behind
// (fargateBehind: node name → kubelet minor version, those older than the
// control plane; refused when the upgrade policy says so), then, unless
// forced, upgrade insights of that version in ERROR (readinessErrors: the
// caller reads them when the upgrade policy says so).
func (s *Store) updateClusterVersion(in updateVersionInput, fargateBehind map[string]string, readinessErrors bool) (UpdateState, error) {
	cluster := s.cfg.Metadata.Name
	var out UpdateState
	err := s.update(func() (bool, error) {
		if u, ok := s.tokenUpdateLocked("", in.ClientRequestToken); ok {
			out = u
			return false, nil
		}
		c := &s.cluster
		if c.Status != ClusterActive {
			return false, errUpdateInProgress(cluster, "", "cluster "+cluster)
		}
		if in.Version == "" {
			return false, invalidParameter(cluster, "", "version is required.")
		}
		if _, ok := eks.Lookup(in.Version); !ok {
			return false, errUnsupportedVersion(cluster)
		}
		if in.Version != eks.NextMinor(c.Version) {
			return false, errMinorStep(cluster, c.Version, in.Version)
		}
		var behind []string
		for _, ng := range s.nodegroups {
			if ng.Version != c.Version {
				behind = append(behind, ng.Name)
			}
		}
		if len(behind) > 0 {
			return false, errNodegroupsBehind(cluster, strings.Join(behind, ","), c.Version)
		}
		if len(fargateBehind) > 0 && s.policy.RefuseFargateBehind {
			nodes := slices.Sorted(maps.Keys(fargateBehind))
			return false, errFargateBehind(cluster, strings.Join(nodes, ","), c.Version)
		}
		if readinessErrors && !in.Force {
			return false, errUpgradeReadiness(cluster)
		}
		out = s.newUpdateLocked("", VersionUpdate, in.ClientRequestToken,
			UpdateParam{"Version", in.Version}, UpdateParam{"PlatformVersion", PlatformVersion})
		c.Status, c.StatusSince, c.Update, c.Target = ClusterUpdating, s.clock.Now().UTC(), out.ID, in.Version
		return true, nil
	})
	return out, err
}

// describeUpdate returns one update of the control plane (nodegroup "") or
// of a node group.
func (s *Store) describeUpdate(nodegroup, id string) (UpdateState, error) {
	cluster := s.cfg.Metadata.Name
	var out UpdateState
	err := s.update(func() (bool, error) {
		if nodegroup != "" && s.nodegroupLocked(nodegroup) == nil {
			return false, errNodegroupNotFound(cluster, nodegroup)
		}
		for i := range s.updates {
			if u := &s.updates[i]; u.ID == id && u.Nodegroup == nodegroup {
				out = u.clone()
				return false, nil
			}
		}
		return false, errUpdateNotFound(cluster, nodegroup, id)
	})
	return out, err
}

// updateIDs returns the IDs of the updates of the control plane (nodegroup
// "") or of a node group.
func (s *Store) updateIDs(nodegroup string) ([]string, error) {
	var out []string
	err := s.update(func() (bool, error) {
		if nodegroup != "" && s.nodegroupLocked(nodegroup) == nil {
			return false, errNodegroupNotFound(s.cfg.Metadata.Name, nodegroup)
		}
		for _, u := range s.updates {
			if u.Nodegroup == nodegroup {
				out = append(out, u.ID)
			}
		}
		return false, nil
	})
	return out, err
}

// updateJSON is the Update shape of the API.
type updateJSON struct {
	ID        string        `json:"id"`
	Status    string        `json:"status"`
	Type      string        `json:"type"`
	Params    []UpdateParam `json:"params"`
	CreatedAt epochSeconds  `json:"createdAt"`
	Errors    []ErrorDetail `json:"errors"`
}

func toUpdateJSON(u UpdateState) map[string]updateJSON {
	errs := u.Errors
	for i := range errs {
		if errs[i].ResourceIDs == nil {
			errs[i].ResourceIDs = []string{}
		}
	}
	return map[string]updateJSON{"update": {ID: u.ID, Status: u.Status, Type: u.Type, Params: u.Params, CreatedAt: epochSeconds(u.CreatedAt), Errors: errs}}
}

func (s *Server) updateClusterVersion(w http.ResponseWriter, r *http.Request, cluster string) {
	var in updateVersionInput
	if !s.decode(w, r, &in) || !s.checkCluster(w, cluster) {
		return
	}
	var behind map[string]string
	if s.store.policy.RefuseFargateBehind {
		kubelets, err := s.cluster.FargateKubelets(r.Context())
		if err != nil {
			s.writeError(w, errServer("reading the Fargate nodes: %v", err))
			return
		}
		version := s.store.KubernetesVersion()
		for node, v := range kubelets {
			if eks.CompareMinor(v, version) < 0 {
				if behind == nil {
					behind = map[string]string{}
				}
				behind[node] = v
			}
		}
	}
	readinessErrors := false
	if !in.Force && s.store.policy.RefuseReadinessErrors {
		all, ok := s.insights(w, r)
		if !ok {
			return
		}
		readinessErrors = slices.ContainsFunc(all, func(i insightJSON) bool { return blocks(i, in.Version) })
	}
	u, err := s.store.updateClusterVersion(in, behind, readinessErrors)
	respond(s, w, u, err, toUpdateJSON)
}

// blocks reports whether an insight blocks an update to version unless
// forced: it is in ERROR for that version, and not kubelet skew, which the
// node group and Fargate checks stand for.
func blocks(i insightJSON, version string) bool {
	return i.KubernetesVersion == version && i.InsightStatus.Status == InsightError && i.Name != kubeletSkew
}

func (s *Server) describeUpdate(w http.ResponseWriter, cluster, id string, q url.Values) {
	if !s.checkCluster(w, cluster) {
		return
	}
	u, err := s.store.describeUpdate(q.Get("nodegroupName"), id)
	respond(s, w, u, err, toUpdateJSON)
}

func (s *Server) listUpdates(w http.ResponseWriter, cluster string, q url.Values) {
	s.list(w, cluster, q, "updateIds", func() ([]string, error) { return s.store.updateIDs(q.Get("nodegroupName")) })
}
