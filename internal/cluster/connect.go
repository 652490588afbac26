package cluster

import (
	"context"
	"fmt"
	"log/slog"

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
	snap.Cluster = live.Cluster{Name: conn.Kube.ClusterName, Version: conn.Version, Region: conn.Kube.Region}
	c := &report.Cluster{Name: conn.Kube.ClusterName, Version: conn.Version, Region: conn.Kube.Region, ProfilesError: conn.EKSError}
	if e := conn.EKS; e != nil {
		snap.Cluster.Name, snap.Cluster.Region = e.Cluster, e.Region
		c.Name, c.Region = e.Cluster, e.Region
		d, err := e.Describe(ctx)
		if err == nil && !SameEndpoint(d.Endpoint, conn.Kube.Config.Host) {
			// Another cluster's profiles would judge these pods: refuse them.
			err = fmt.Errorf("EKS cluster %q in %s serves %s, not the API server of context %q (%s): give the --cluster-name and --region of this cluster",
				e.Cluster, e.Region, d.Endpoint, conn.Kube.Context, conn.Kube.Config.Host)
		}
		if err == nil {
			snap.Cluster.VPCID = d.VPCID
			if v, err := eks.ParseMinor(d.Version); err == nil {
				// EKS's word on the control plane's version (the emulator's API
				// server is the version it was built at, whatever the EKS API
				// has updated it to).
				snap.Cluster.Version, c.Version = v, v
			}
			snap.Profiles, err = e.Profiles(ctx)
		}
		if err != nil {
			c.ProfilesError = err.Error()
			snap.Profiles = nil
		} else {
			var errs []error
			snap.Foundation, errs = e.Foundation(ctx, d, snap.Profiles)
			for _, err := range errs {
				slog.Warn("the cluster's VPC or pod execution roles not fully read (rules FG053-FG058): " + err.Error())
			}
			// The EC2 nodes that run now serve node ports (FG017, FG018, FG061).
			ec2 := 0
			for _, n := range snap.Nodes {
				if n.Labels[fargate.ComputeTypeLabel] != "fargate" {
					ec2++
				}
			}
			if ec2 > 0 {
				snap.Foundation.NodeGroups = append(snap.Foundation.NodeGroups, foundation.NodeGroup{Name: "EC2 nodes", DesiredSize: ec2})
			}
		}
		c.Profiles = snap.Profiles
	}
	if c.Name == "" {
		c.Name = conn.Kube.Context
	}
	if c.ProfilesError != "" {
		slog.Warn("Fargate profiles not read: " + c.ProfilesError)
	}
	return snap, read, c
}
