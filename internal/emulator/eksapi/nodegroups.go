package eksapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/pkg/eks"
)

// Statuses of node groups, as the API writes them.
const (
	NodegroupCreating = "CREATING"
	NodegroupActive   = "ACTIVE"
	NodegroupUpdating = "UPDATING"
	NodegroupDeleting = "DELETING"
)

// PodEvictionFailure is the error code of a node group update that could not
// drain a node.
const PodEvictionFailure = "PodEvictionFailure"

// Scaling is a node group's scaling configuration.
type Scaling struct {
	MinSize     int `json:"minSize"`
	MaxSize     int `json:"maxSize"`
	DesiredSize int `json:"desiredSize"`
}

// NodegroupState is a managed node group as the Store keeps it. The
// emulator's node controller makes the cluster's nodes match it: Scaling,
// Version and ReleaseVersion, or Target while an update runs.
type NodegroupState struct {
	Name           string            `json:"nodegroupName"`
	ARN            string            `json:"nodegroupArn"`
	CreatedAt      time.Time         `json:"createdAt"`
	ModifiedAt     time.Time         `json:"modifiedAt"`
	Status         string            `json:"status"`
	StatusSince    time.Time         `json:"statusSince"`
	Version        string            `json:"version"`
	ReleaseVersion string            `json:"releaseVersion"`
	Scaling        Scaling           `json:"scalingConfig"`
	InstanceTypes  []string          `json:"instanceTypes"`
	Subnets        []string          `json:"subnets"`
	NodeRole       string            `json:"nodeRole"`
	AmiType        string            `json:"amiType"`
	CapacityType   string            `json:"capacityType"`
	DiskSize       int               `json:"diskSize"`
	Labels         map[string]string `json:"labels"`
	Tags           map[string]string `json:"tags"`
	// ClientRequestToken is the idempotency token of the create.
	ClientRequestToken string `json:"clientRequestToken,omitempty"`
	// Update is the ID of the update in progress, Target what it makes.
	Update string           `json:"update,omitempty"`
	Target *NodegroupTarget `json:"target,omitempty"`
}

// NodegroupTarget is what an update in progress makes of a node group.
type NodegroupTarget struct {
	Version        string            `json:"version"`
	ReleaseVersion string            `json:"releaseVersion"`
	Scaling        Scaling           `json:"scalingConfig"`
	Labels         map[string]string `json:"labels"`
	// Force terminates nodes whose pods cannot be evicted rather than fail.
	Force bool `json:"force,omitempty"`
}

func (n *NodegroupState) clone() NodegroupState {
	c := *n
	c.InstanceTypes, c.Subnets = slices.Clone(n.InstanceTypes), slices.Clone(n.Subnets)
	c.Labels, c.Tags = maps.Clone(n.Labels), maps.Clone(n.Tags)
	if n.Target != nil {
		t := *n.Target
		t.Labels = maps.Clone(n.Target.Labels)
		c.Target = &t
	}
	return c
}

// Desired is what the node group's nodes must be now: the update's target
// while one runs.
func (n *NodegroupState) Desired() NodegroupTarget {
	if n.Target != nil {
		return *n.Target
	}
	return NodegroupTarget{Version: n.Version, ReleaseVersion: n.ReleaseVersion, Scaling: n.Scaling, Labels: n.Labels}
}

func (s *Store) sortNodegroups() {
	slices.SortFunc(s.nodegroups, func(a, b NodegroupState) int { return strings.Compare(a.Name, b.Name) })
}

func (s *Store) nodegroupARN(name string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:nodegroup/%s/%s/%s", s.cfg.Metadata.Region, s.cfg.AccountID, s.cfg.Metadata.Name, name, strings.ReplaceAll(name, "/", "-"))
}

func (s *Store) nodeRole() string {
	return fmt.Sprintf("arn:aws:iam::%s:role/%s-node-role", s.cfg.AccountID, s.cfg.Metadata.Name)
}

// amiType is the EKS AMI type of an instance type's architecture.
func amiType(instanceType string) string {
	if clusterconfig.InstanceTypes[instanceType].Arch == "arm64" {
		return "AL2023_ARM_64_STANDARD"
	}
	return "AL2023_x86_64_STANDARD"
}

func (s *Store) nodegroupLocked(name string) *NodegroupState {
	for i := range s.nodegroups {
		if s.nodegroups[i].Name == name {
			return &s.nodegroups[i]
		}
	}
	return nil
}

// Nodegroups returns every node group, in any status, sorted by name, after
// applying due transitions.
func (s *Store) Nodegroups() []NodegroupState {
	var out []NodegroupState
	_ = s.update(func() (bool, error) { // read only: it cannot fail
		for i := range s.nodegroups {
			out = append(out, s.nodegroups[i].clone())
		}
		return false, nil
	})
	return out
}

// FinishNodegroupUpdate ends the update in progress of a node group, once its
// nodes match the target: Successful without errors, the node group then
// takes the target; Failed with errors, the node group keeps its version and
// scaling. It is the emulator's node controller that calls it; an update
// that is no longer in progress is ignored.
func (s *Store) FinishNodegroupUpdate(name, id string, errs ...ErrorDetail) error {
	return s.update(func() (bool, error) {
		ng := s.nodegroupLocked(name)
		if ng == nil || ng.Update != id || ng.Target == nil {
			return false, nil
		}
		if len(errs) == 0 {
			t := ng.Target
			ng.Version, ng.ReleaseVersion, ng.Scaling, ng.Labels = t.Version, t.ReleaseVersion, t.Scaling, t.Labels
		}
		s.finishUpdateLocked(id, errs)
		now := s.clock.Now().UTC()
		ng.Status, ng.StatusSince, ng.ModifiedAt, ng.Update, ng.Target = NodegroupActive, now, now, "", nil
		return true, nil
	})
}

// createNodegroupRequest is the body of CreateNodegroup, with the fields the
// emulator models.
type createNodegroupRequest struct {
	NodegroupName      string            `json:"nodegroupName"`
	ScalingConfig      *Scaling          `json:"scalingConfig"`
	Subnets            []string          `json:"subnets"`
	InstanceTypes      []string          `json:"instanceTypes"`
	NodeRole           string            `json:"nodeRole"`
	Labels             map[string]string `json:"labels"`
	Tags               map[string]string `json:"tags"`
	Version            string            `json:"version"`
	ReleaseVersion     string            `json:"releaseVersion"`
	AmiType            string            `json:"amiType"`
	CapacityType       string            `json:"capacityType"`
	DiskSize           int               `json:"diskSize"`
	ClientRequestToken string            `json:"clientRequestToken"`
}

// checkScaling checks a scaling configuration as EKS documents it. Texts
// composed (unconfirmed).
func checkScaling(cluster, name string, sc Scaling) *apiError {
	switch {
	case sc.MinSize < 0 || sc.MaxSize < 1 || sc.DesiredSize < 0:
		return nodegroupParameter(cluster, name, "scalingConfig: minSize and desiredSize must be at least 0 and maxSize at least 1.")
	case sc.MinSize > sc.DesiredSize || sc.DesiredSize > sc.MaxSize:
		return nodegroupParameter(cluster, name, "scalingConfig: desiredSize %d must be between minSize %d and maxSize %d.", sc.DesiredSize, sc.MinSize, sc.MaxSize)
	}
	return nil
}

// releaseFor returns the release a node group of Kubernetes version gets:
// the requested one, or the newest; a release of another version is refused.
func releaseFor(cluster, name, version, requested string) (string, *apiError) {
	if requested == "" {
		return clusterconfig.LatestRelease(version), nil
	}
	if m, ok := clusterconfig.ReleaseMinor(requested); !ok || m != version {
		return "", nodegroupParameter(cluster, name, "releaseVersion %s is not a release of Kubernetes %s.", requested, version)
	}
	return requested, nil
}

// createNodegroup creates a node group, CREATING, after EKS's checks.
func (s *Store) createNodegroup(req createNodegroupRequest) (NodegroupState, error) {
	cluster, name := s.cfg.Metadata.Name, req.NodegroupName
	switch {
	case name == "":
		return NodegroupState{}, invalidParameter(cluster, "", "nodegroupName is required.")
	case req.NodeRole == "":
		return NodegroupState{}, nodegroupParameter(cluster, name, "nodeRole is required.")
	case len(req.Subnets) == 0:
		return NodegroupState{}, nodegroupParameter(cluster, name, "subnets is required.")
	}
	sc := Scaling{MinSize: 1, MaxSize: 2, DesiredSize: 2} // EKS's defaults
	if req.ScalingConfig != nil {
		sc = *req.ScalingConfig
	}
	if aerr := checkScaling(cluster, name, sc); aerr != nil {
		return NodegroupState{}, aerr
	}
	for _, id := range req.Subnets {
		if _, ok := s.SubnetAZ(id); !ok {
			return NodegroupState{}, nodegroupParameter(cluster, name, "Subnet %s is not a subnet of the cluster's VPC %s.", id, s.cfg.VPC.ID)
		}
	}
	types := req.InstanceTypes
	if len(types) == 0 {
		types = []string{"t3.medium"}
	}
	for _, t := range types {
		if _, ok := clusterconfig.InstanceTypes[t]; !ok {
			return NodegroupState{}, nodegroupParameter(cluster, name, "Instance type %s is not one the emulator models.", t)
		}
	}
	var out NodegroupState
	err := s.update(func() (bool, error) {
		if req.ClientRequestToken != "" {
			for i := range s.nodegroups {
				if ng := &s.nodegroups[i]; ng.ClientRequestToken == req.ClientRequestToken && ng.Name == name {
					out = ng.clone()
					return false, nil
				}
			}
		}
		if s.nodegroupLocked(name) != nil {
			return false, errNodegroupExists(cluster, name)
		}
		version := req.Version
		if version == "" {
			version = s.cluster.Version
		}
		if _, err := eks.ParseMinor(version); err != nil {
			return false, errUnsupportedVersion(cluster).withNodegroup(name)
		}
		if eks.CompareMinor(version, s.cluster.Version) > 0 {
			return false, nodegroupParameter(cluster, name, "Nodegroup version %s cannot be newer than the cluster version %s.", version, s.cluster.Version)
		}
		release, aerr := releaseFor(cluster, name, version, req.ReleaseVersion)
		if aerr != nil {
			return false, aerr
		}
		now := s.clock.Now().UTC()
		ng := NodegroupState{
			Name: name, ARN: s.nodegroupARN(name), CreatedAt: now, ModifiedAt: now,
			Status: NodegroupCreating, StatusSince: now, Version: version, ReleaseVersion: release,
			Scaling: sc, InstanceTypes: types, Subnets: slices.Clone(req.Subnets), NodeRole: req.NodeRole,
			AmiType: cmpOr(req.AmiType, amiType(types[0])), CapacityType: cmpOr(req.CapacityType, "ON_DEMAND"),
			DiskSize: req.DiskSize, Labels: maps.Clone(req.Labels), Tags: maps.Clone(req.Tags),
			ClientRequestToken: req.ClientRequestToken,
		}
		if ng.DiskSize == 0 {
			ng.DiskSize = 20
		}
		if ng.Labels == nil {
			ng.Labels = map[string]string{}
		}
		if ng.Tags == nil {
			ng.Tags = map[string]string{}
		}
		s.nodegroups = append(s.nodegroups, ng)
		s.sortNodegroups()
		out = ng.clone()
		return true, nil
	})
	return out, err
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// SubnetAZ returns the AZ of a subnet of the VPC, private or public.
func (s *Store) SubnetAZ(id string) (string, bool) {
	if az, ok := s.cfg.SubnetAZ(id); ok {
		return az, true
	}
	for az, sn := range s.cfg.VPC.Subnets.Public {
		if sn.ID == id {
			return az, true
		}
	}
	return "", false
}

// nodegroup returns one node group after applying due transitions.
func (s *Store) nodegroup(name string) (NodegroupState, error) {
	var out NodegroupState
	err := s.update(func() (bool, error) {
		ng := s.nodegroupLocked(name)
		if ng == nil {
			return false, errNodegroupNotFound(s.cfg.Metadata.Name, name)
		}
		out = ng.clone()
		return false, nil
	})
	return out, err
}

// deleteNodegroup starts deleting a node group: DELETING, gone
// Timings.NodegroupDelete later; the node controller removes its nodes.
func (s *Store) deleteNodegroup(name string) (NodegroupState, error) {
	var out NodegroupState
	err := s.update(func() (bool, error) {
		ng := s.nodegroupLocked(name)
		if ng == nil {
			return false, errNodegroupNotFound(s.cfg.Metadata.Name, name)
		}
		if ng.Status != NodegroupActive {
			return false, errNodegroupBusy(s.cfg.Metadata.Name, name, ng.Status)
		}
		ng.Status, ng.StatusSince = NodegroupDeleting, s.clock.Now().UTC()
		out = ng.clone()
		return true, nil
	})
	return out, err
}

// updateNodegroupConfigRequest is the body of UpdateNodegroupConfig, with
// the fields the emulator models.
type updateNodegroupConfigRequest struct {
	ScalingConfig *struct {
		MinSize     *int `json:"minSize"`
		MaxSize     *int `json:"maxSize"`
		DesiredSize *int `json:"desiredSize"`
	} `json:"scalingConfig"`
	Labels *struct {
		AddOrUpdateLabels map[string]string `json:"addOrUpdateLabels"`
		RemoveLabels      []string          `json:"removeLabels"`
	} `json:"labels"`
	ClientRequestToken string `json:"clientRequestToken"`
}

// updateNodegroup starts an update of a node group. A request repeated with
// its clientRequestToken returns the update it started; otherwise the node
// group must be ACTIVE, and begin checks the request and starts the update
// (beginNodegroupUpdateLocked) under the Store's lock.
func (s *Store) updateNodegroup(name, token string, begin func(ng *NodegroupState) (UpdateState, error)) (UpdateState, error) {
	cluster := s.cfg.Metadata.Name
	var out UpdateState
	err := s.update(func() (bool, error) {
		if u, ok := s.tokenUpdateLocked(name, token); ok {
			out = u
			return false, nil
		}
		ng := s.nodegroupLocked(name)
		switch {
		case ng == nil:
			return false, errNodegroupNotFound(cluster, name)
		case ng.Status == NodegroupUpdating:
			return false, errUpdateInProgress(cluster, name, "node group "+name)
		case ng.Status != NodegroupActive:
			return false, errNodegroupBusy(cluster, name, ng.Status)
		}
		var err error
		out, err = begin(ng)
		return err == nil, err
	})
	return out, err
}

// beginNodegroupUpdateLocked records an update of a node group towards t
// and makes the node group UPDATING.
func (s *Store) beginNodegroupUpdateLocked(ng *NodegroupState, typ, token string, t NodegroupTarget, params ...UpdateParam) UpdateState {
	u := s.newUpdateLocked(ng.Name, typ, token, params...)
	now := s.clock.Now().UTC()
	ng.Status, ng.StatusSince, ng.ModifiedAt, ng.Update, ng.Target = NodegroupUpdating, now, now, u.ID, &t
	return u
}

// updateNodegroupConfig starts a ConfigUpdate: scaling and labels.
func (s *Store) updateNodegroupConfig(name string, req updateNodegroupConfigRequest) (UpdateState, error) {
	cluster := s.cfg.Metadata.Name
	return s.updateNodegroup(name, req.ClientRequestToken, func(ng *NodegroupState) (UpdateState, error) {
		t := ng.Desired()
		t.Labels = maps.Clone(t.Labels)
		var params []UpdateParam
		if sc := req.ScalingConfig; sc != nil {
			for _, f := range []struct {
				param string
				from  *int
				to    *int
			}{{"MinSize", sc.MinSize, &t.Scaling.MinSize}, {"MaxSize", sc.MaxSize, &t.Scaling.MaxSize}, {"DesiredSize", sc.DesiredSize, &t.Scaling.DesiredSize}} {
				if f.from != nil {
					*f.to = *f.from
					params = append(params, UpdateParam{f.param, strconv.Itoa(*f.from)})
				}
			}
			if aerr := checkScaling(cluster, name, t.Scaling); aerr != nil {
				return UpdateState{}, aerr
			}
		}
		if l := req.Labels; l != nil {
			if len(l.AddOrUpdateLabels) > 0 {
				maps.Copy(t.Labels, l.AddOrUpdateLabels)
				data, _ := json.Marshal(l.AddOrUpdateLabels)
				params = append(params, UpdateParam{"LabelsToAdd", string(data)})
			}
			if len(l.RemoveLabels) > 0 {
				for _, k := range l.RemoveLabels {
					delete(t.Labels, k)
				}
				data, _ := json.Marshal(l.RemoveLabels)
				params = append(params, UpdateParam{"LabelsToRemove", string(data)})
			}
		}
		if len(params) == 0 {
			return UpdateState{}, nodegroupParameter(cluster, name, "No changes needed: the request updates neither scalingConfig nor labels.")
		}
		return s.beginNodegroupUpdateLocked(ng, ConfigUpdate, req.ClientRequestToken, t, params...), nil
	})
}

// updateNodegroupVersionRequest is the body of UpdateNodegroupVersion.
type updateNodegroupVersionRequest struct {
	Version            string `json:"version"`
	ReleaseVersion     string `json:"releaseVersion"`
	Force              bool   `json:"force"`
	ClientRequestToken string `json:"clientRequestToken"`
}

// updateNodegroupVersion starts a VersionUpdate: to the requested Kubernetes
// version (default the control plane's) and release, which must be that
// version's newest unless it is the node group's current one.
func (s *Store) updateNodegroupVersion(name string, req updateNodegroupVersionRequest) (UpdateState, error) {
	cluster := s.cfg.Metadata.Name
	return s.updateNodegroup(name, req.ClientRequestToken, func(ng *NodegroupState) (UpdateState, error) {
		version := cmpOr(req.Version, s.cluster.Version)
		if _, err := eks.ParseMinor(version); err != nil {
			return UpdateState{}, errUnsupportedVersion(cluster).withNodegroup(name)
		}
		switch {
		case eks.CompareMinor(version, s.cluster.Version) > 0:
			return UpdateState{}, nodegroupParameter(cluster, name, "Nodegroup version %s cannot be newer than the cluster version %s.", version, s.cluster.Version)
		case eks.CompareMinor(version, ng.Version) < 0:
			return UpdateState{}, nodegroupParameter(cluster, name, "Nodegroup version %s cannot be older than its current version %s.", version, ng.Version)
		}
		latest := clusterconfig.LatestRelease(version)
		release := cmpOr(req.ReleaseVersion, latest)
		current := version == ng.Version && release == ng.ReleaseVersion
		if release != latest && !current {
			return UpdateState{}, errReleaseVersion(cluster, name, release, latest)
		}
		if current {
			return UpdateState{}, nodegroupParameter(cluster, name, "Nodegroup %s is already at version %s, release %s.", name, version, release)
		}
		t := ng.Desired()
		t.Version, t.ReleaseVersion, t.Force = version, release, req.Force
		return s.beginNodegroupUpdateLocked(ng, VersionUpdate, req.ClientRequestToken, t,
			UpdateParam{"Version", version}, UpdateParam{"ReleaseVersion", release}), nil
	})
}

// nodegroupJSON is the Nodegroup shape of the API, with the fields the
// emulator knows.
type nodegroupJSON struct {
	NodegroupName  string            `json:"nodegroupName"`
	NodegroupArn   string            `json:"nodegroupArn"`
	ClusterName    string            `json:"clusterName"`
	Version        string            `json:"version"`
	ReleaseVersion string            `json:"releaseVersion"`
	CreatedAt      epochSeconds      `json:"createdAt"`
	ModifiedAt     epochSeconds      `json:"modifiedAt"`
	Status         string            `json:"status"`
	CapacityType   string            `json:"capacityType"`
	ScalingConfig  Scaling           `json:"scalingConfig"`
	InstanceTypes  []string          `json:"instanceTypes"`
	Subnets        []string          `json:"subnets"`
	AmiType        string            `json:"amiType"`
	NodeRole       string            `json:"nodeRole"`
	Labels         map[string]string `json:"labels"`
	Resources      resourcesJSON     `json:"resources"`
	DiskSize       int               `json:"diskSize"`
	Health         Health            `json:"health"`
	UpdateConfig   map[string]int    `json:"updateConfig"`
	Tags           map[string]string `json:"tags"`
}

type resourcesJSON struct {
	AutoScalingGroups []map[string]string `json:"autoScalingGroups"`
}

func (s *Server) toNodegroupJSON(ng NodegroupState) map[string]nodegroupJSON {
	return map[string]nodegroupJSON{"nodegroup": {
		NodegroupName: ng.Name, NodegroupArn: ng.ARN, ClusterName: s.cfg.Metadata.Name,
		Version: ng.Version, ReleaseVersion: ng.ReleaseVersion,
		CreatedAt: epochSeconds(ng.CreatedAt), ModifiedAt: epochSeconds(ng.ModifiedAt), Status: ng.Status,
		CapacityType: ng.CapacityType, ScalingConfig: ng.Scaling, InstanceTypes: ng.InstanceTypes,
		Subnets: ng.Subnets, AmiType: ng.AmiType, NodeRole: ng.NodeRole, Labels: ng.Labels,
		Resources: resourcesJSON{AutoScalingGroups: []map[string]string{{"name": "eks-" + ng.Name}}},
		DiskSize:  ng.DiskSize, Health: Health{Issues: []Issue{}}, UpdateConfig: map[string]int{"maxUnavailable": 1},
		Tags: ng.Tags,
	}}
}

func (s *Server) createNodegroup(w http.ResponseWriter, r *http.Request, cluster string) {
	var req createNodegroupRequest
	if !s.decode(w, r, &req) || !s.checkCluster(w, cluster) {
		return
	}
	ng, err := s.store.createNodegroup(req)
	respond(s, w, ng, err, s.toNodegroupJSON)
}

func (s *Server) describeNodegroup(w http.ResponseWriter, cluster, name string) {
	if !s.checkCluster(w, cluster) {
		return
	}
	ng, err := s.store.nodegroup(name)
	respond(s, w, ng, err, s.toNodegroupJSON)
}

func (s *Server) deleteNodegroup(w http.ResponseWriter, cluster, name string) {
	if !s.checkCluster(w, cluster) {
		return
	}
	ng, err := s.store.deleteNodegroup(name)
	respond(s, w, ng, err, s.toNodegroupJSON)
}

func (s *Server) listNodegroups(w http.ResponseWriter, cluster string, q url.Values) {
	s.list(w, cluster, q, "nodegroups", func() ([]string, error) {
		var names []string
		for _, ng := range s.store.Nodegroups() {
			names = append(names, ng.Name)
		}
		return names, nil
	})
}

func (s *Server) updateNodegroupConfig(w http.ResponseWriter, r *http.Request, cluster, name string) {
	var req updateNodegroupConfigRequest
	if !s.decode(w, r, &req) || !s.checkCluster(w, cluster) {
		return
	}
	u, err := s.store.updateNodegroupConfig(name, req)
	respond(s, w, u, err, toUpdateJSON)
}

func (s *Server) updateNodegroupVersion(w http.ResponseWriter, r *http.Request, cluster, name string) {
	var req updateNodegroupVersionRequest
	if !s.decode(w, r, &req) || !s.checkCluster(w, cluster) {
		return
	}
	u, err := s.store.updateNodegroupVersion(name, req)
	respond(s, w, u, err, toUpdateJSON)
}
