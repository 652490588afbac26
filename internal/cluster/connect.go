package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/live"
)

// Connection is a cluster reached through its kubeconfig, and its EKS API
// when that could be reached.
type Connection struct {
	Kube    *Kube
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	// Version is the control plane's minor version.
	Version string
	EKS     *EKS
	// EKSError says why the EKS API is not used; empty when it is.
	EKSError string
}

// Connect reaches the cluster. An error means nothing can be read: no
// kubeconfig, no such context, or an API server that does not answer.
func Connect(ctx context.Context, t Target) (*Connection, error) {
	kube, err := LoadKube(t)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(kube.Config)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s (context %q): %w", kube.Config.Host, kube.Context, err)
	}
	dyn, err := dynamic.NewForConfig(kube.Config)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s (context %q): %w", kube.Config.Host, kube.Context, err)
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("cannot reach the Kubernetes API server %s (context %q): %w", kube.Config.Host, kube.Context, err)
	}
	c := &Connection{Kube: kube, Client: client, Dynamic: dyn}
	if c.Version, err = eks.ParseMinor(v.GitVersion); err != nil {
		return nil, fmt.Errorf("the API server %s reports version %q: %w", kube.Config.Host, v.GitVersion, err)
	}
	if c.EKS, err = NewEKS(ctx, t, kube); err != nil {
		c.EKSError = err.Error()
	}
	return c, nil
}

// Read reads the cluster: the snapshot for pkg/live, the objects for
// check's rules, and the report's cluster header. o says what to read.
func (conn *Connection) Read(ctx context.Context, o ReadOptions) (*live.Snapshot, *Read, *report.Cluster) {
	read := ReadKube(ctx, conn.Client, conn.Dynamic, o)
	snap := &read.Snapshot
	e := conn.ReadEKS(ctx)
	for _, w := range e.Warnings {
		slog.Warn(w)
	}
	c := conn.Header(snap, e)
	if c.ProfilesError != "" {
		slog.Warn("Fargate profiles not read: " + c.ProfilesError)
	}
	return snap, read, c
}

// EKSRead is what the EKS API said of the cluster.
type EKSRead struct {
	// Name and Region are the EKS cluster's; "" without the EKS API.
	Name, Region string
	// VPCID and Version (its minor) are DescribeCluster's; "" when it failed.
	VPCID, Version string
	Profiles       []fargate.Profile
	// Foundation is what EC2 and IAM say of the VPC and the pod execution
	// roles.
	Foundation *foundation.Foundation
	// Err says why the profiles are not known; "" when they are.
	Err string
	// Warnings say what of the foundation could not be read: the rules
	// that need it are skipped.
	Warnings []string
}

// ReadEKS reads the cluster, its Fargate profiles and their foundation
// from the EKS, EC2 and IAM APIs.
func (conn *Connection) ReadEKS(ctx context.Context) EKSRead {
	r := EKSRead{Err: conn.EKSError}
	e := conn.EKS
	if e == nil {
		return r
	}
	r.Name, r.Region = e.Cluster, e.Region
	d, err := e.Describe(ctx)
	if err == nil && !SameEndpoint(d.Endpoint, conn.Kube.Config.Host) {
		// Another cluster's profiles would judge these pods: refuse them.
		err = fmt.Errorf("EKS cluster %q in %s serves %s, not the API server of context %q (%s): give the --cluster-name and --region of this cluster",
			e.Cluster, e.Region, d.Endpoint, conn.Kube.Context, conn.Kube.Config.Host)
	}
	if err == nil {
		r.VPCID = d.VPCID
		if v, err := eks.ParseMinor(d.Version); err == nil {
			// EKS's word on the control plane's version (the emulator's API
			// server is the version it was built at, whatever the EKS API
			// has updated it to).
			r.Version = v
		}
		r.Profiles, err = e.Profiles(ctx)
	}
	if err != nil {
		r.Err, r.Profiles = err.Error(), nil
		return r
	}
	var errs []error
	r.Foundation, errs = e.Foundation(ctx, d, r.Profiles)
	for _, err := range errs {
		r.Warnings = append(r.Warnings, "the cluster's VPC or pod execution roles not fully read (rules FG053-FG058): "+err.Error())
	}
	return r
}

// Header sets on snap what the EKS API said, and returns the report's
// cluster header.
func (conn *Connection) Header(snap *live.Snapshot, e EKSRead) *report.Cluster {
	snap.Cluster = live.Cluster{Name: conn.Kube.ClusterName, Version: conn.Version, Region: conn.Kube.Region, VPCID: e.VPCID}
	c := &report.Cluster{Name: conn.Kube.ClusterName, Version: conn.Version, Region: conn.Kube.Region, ProfilesError: e.Err}
	if e.Name != "" {
		snap.Cluster.Name, snap.Cluster.Region = e.Name, e.Region
		c.Name, c.Region = e.Name, e.Region
	}
	if e.Version != "" {
		snap.Cluster.Version, c.Version = e.Version, e.Version
	}
	if e.Err == "" && e.Foundation != nil {
		snap.Profiles = e.Profiles
		f := *e.Foundation
		f.NodeGroups = slices.Clone(f.NodeGroups)
		// The EC2 nodes that run now serve node ports (FG017, FG018, FG061).
		ec2 := 0
		for _, n := range snap.Nodes {
			if n.Labels[fargate.ComputeTypeLabel] != "fargate" {
				ec2++
			}
		}
		if ec2 > 0 {
			f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Name: "EC2 nodes", DesiredSize: ec2})
		}
		snap.Foundation = &f
		c.Profiles = snap.Profiles
	}
	if c.Name == "" {
		c.Name = conn.Kube.Context
	}
	return c
}
