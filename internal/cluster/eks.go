package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/upgrade"
)

// EKS reads a cluster and its Fargate profiles from the EKS API, and the
// AZs of its subnets from EC2.
type EKS struct {
	Client  *eks.Client
	EC2     *ec2.Client
	IAM     *iam.Client
	Cluster string
	Region  string
}

// NewEKS returns a client of the EKS API with the SDK's default credential
// chain. The cluster is t.ClusterName, else the kubeconfig's; the region
// t.Region, else the kubeconfig's (where the cluster is), else the SDK's
// (AWS_REGION, the profile's); the AWS profile the kubeconfig's token
// command's, else the SDK's.
func NewEKS(ctx context.Context, t Target, kube *Kube) (*EKS, error) {
	name, region := t.ClusterName, t.Region
	var opts []func(*config.LoadOptions) error
	if kube != nil {
		name, region = cmp.Or(name, kube.ClusterName), cmp.Or(region, kube.Region)
		if kube.AWSProfile != "" {
			opts = append(opts, config.WithSharedConfigProfile(kube.AWSProfile))
		}
	}
	if name == "" {
		return nil, ErrNoClusterName
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	// The SDK's own warnings (an instance metadata service that refuses a
	// token, say) are not scan's output: its errors say what went wrong.
	opts = append(opts, config.WithLogger(logging.Nop{}))
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: give --region or set AWS_REGION")
	}
	client := eks.NewFromConfig(cfg, func(o *eks.Options) {
		if t.EKSEndpoint != "" {
			o.BaseEndpoint = aws.String(t.EKSEndpoint)
		}
	})
	ec2Client := ec2.NewFromConfig(cfg, func(o *ec2.Options) {
		if t.EC2Endpoint != "" {
			o.BaseEndpoint = aws.String(t.EC2Endpoint)
		}
	})
	// IAM's endpoint is the SDK's (AWS_ENDPOINT_URL_IAM for the emulator).
	return &EKS{Client: client, EC2: ec2Client, IAM: iam.NewFromConfig(cfg), Cluster: name, Region: cfg.Region}, nil
}

// Description is what DescribeCluster says of the cluster.
type Description struct {
	// Endpoint is the API server's URL.
	Endpoint string
	// ARN is the cluster's ARN, which says its account.
	ARN   string
	VPCID string
	// Version is the control plane's minor version.
	Version string
}

// Describe describes the cluster.
func (e *EKS) Describe(ctx context.Context) (Description, error) {
	out, err := e.Client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(e.Cluster)})
	if err != nil {
		return Description{}, e.explain("eks:DescribeCluster", err)
	}
	c := out.Cluster
	d := Description{Endpoint: aws.ToString(c.Endpoint), ARN: aws.ToString(c.Arn), Version: aws.ToString(c.Version)}
	if c.ResourcesVpcConfig != nil {
		d.VPCID = aws.ToString(c.ResourcesVpcConfig.VpcId)
	}
	return d, nil
}

// NodeGroups returns the cluster's managed node groups, sorted by name.
func (e *EKS) NodeGroups(ctx context.Context) ([]upgrade.NodeGroup, error) {
	var out []upgrade.NodeGroup
	pages := eks.NewListNodegroupsPaginator(e.Client, &eks.ListNodegroupsInput{ClusterName: aws.String(e.Cluster)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, e.explain("eks:ListNodegroups", err)
		}
		for _, name := range page.Nodegroups {
			d, err := e.Client.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(e.Cluster), NodegroupName: aws.String(name)})
			var nf *ekstypes.ResourceNotFoundException
			if errors.As(err, &nf) {
				continue // deleted between the list and now
			}
			if err != nil {
				return nil, e.explain("eks:DescribeNodegroup", err)
			}
			ng := d.Nodegroup
			out = append(out, upgrade.NodeGroup{Name: name, Version: aws.ToString(ng.Version), ReleaseVersion: aws.ToString(ng.ReleaseVersion)})
		}
	}
	return out, nil
}

// Insights returns the cluster's upgrade insights.
func (e *EKS) Insights(ctx context.Context) ([]upgrade.Insight, error) {
	var out []upgrade.Insight
	pages := eks.NewListInsightsPaginator(e.Client, &eks.ListInsightsInput{ClusterName: aws.String(e.Cluster),
		Filter: &ekstypes.InsightsFilter{Categories: []ekstypes.Category{ekstypes.CategoryUpgradeReadiness}}})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, e.explain("eks:ListInsights", err)
		}
		for _, in := range page.Insights {
			i := upgrade.Insight{ID: aws.ToString(in.Id), Name: aws.ToString(in.Name), Version: aws.ToString(in.KubernetesVersion),
				Description: aws.ToString(in.Description)}
			if in.InsightStatus != nil {
				i.Status, i.Reason = string(in.InsightStatus.Status), aws.ToString(in.InsightStatus.Reason)
			}
			out = append(out, i)
		}
	}
	return out, nil
}

// SameEndpoint reports whether two API server URLs name the same server:
// the EKS API's endpoint of a cluster and a kubeconfig's server.
func SameEndpoint(a, b string) bool {
	norm := func(s string) string {
		s = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "/")
		return strings.TrimSuffix(s, ":443")
	}
	return norm(a) == norm(b)
}

// Profiles returns the cluster's Fargate profiles with their status, in
// the order the API lists them.
func (e *EKS) Profiles(ctx context.Context) ([]fargate.Profile, error) {
	out := []fargate.Profile{}
	pages := eks.NewListFargateProfilesPaginator(e.Client, &eks.ListFargateProfilesInput{ClusterName: aws.String(e.Cluster)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, e.explain("eks:ListFargateProfiles", err)
		}
		for _, name := range page.FargateProfileNames {
			d, err := e.Client.DescribeFargateProfile(ctx, &eks.DescribeFargateProfileInput{ClusterName: aws.String(e.Cluster), FargateProfileName: aws.String(name)})
			var nf *ekstypes.ResourceNotFoundException
			if errors.As(err, &nf) {
				continue // deleted between the list and now
			}
			if err != nil {
				return nil, e.explain("eks:DescribeFargateProfile", err)
			}
			out = append(out, profile(d.FargateProfile))
		}
	}
	return out, nil
}

// SubnetZones returns the AZ of each of the given subnets, from EC2
// DescribeSubnets.
func (e *EKS) SubnetZones(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	pages := ec2.NewDescribeSubnetsPaginator(e.EC2, &ec2.DescribeSubnetsInput{SubnetIds: ids})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, e.explain("ec2:DescribeSubnets", err)
		}
		for _, s := range page.Subnets {
			out[aws.ToString(s.SubnetId)] = aws.ToString(s.AvailabilityZone)
		}
	}
	return out, nil
}

func profile(p *ekstypes.FargateProfile) fargate.Profile {
	out := fargate.Profile{
		Name: aws.ToString(p.FargateProfileName), Subnets: p.Subnets, Status: string(p.Status),
		PodExecutionRoleARN: aws.ToString(p.PodExecutionRoleArn),
	}
	for _, s := range p.Selectors {
		out.Selectors = append(out.Selectors, fargate.Selector{Namespace: aws.ToString(s.Namespace), Labels: s.Labels})
	}
	return out
}

// explain words an EKS API error in one line: what was called, on which
// cluster, and why it failed.
func (e *EKS) explain(action string, err error) error {
	var nf *ekstypes.ResourceNotFoundException
	var api smithy.APIError
	var op *net.OpError
	switch {
	// Credentials first: without any, the SDK's last try is the instance
	// metadata service, whose dial error is not the EKS API's.
	case strings.Contains(err.Error(), "failed to retrieve credentials") || strings.Contains(err.Error(), "no EC2 IMDS role found"):
		return fmt.Errorf("no AWS credentials for %s: configure them as for the AWS CLI (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...)", action)
	case errors.As(err, &op):
		return fmt.Errorf("cannot reach the EKS API for %s on cluster %q in %s: %w", action, e.Cluster, e.Region, op)
	case errors.As(err, &nf):
		return fmt.Errorf("the EKS API in %s knows no cluster named %q (%s)", e.Region, e.Cluster, action)
	case errors.As(err, &api) && (api.ErrorCode() == "AccessDeniedException" || api.ErrorCode() == "UnauthorizedOperation"):
		return fmt.Errorf("not allowed to call %s on cluster %q: %s", action, e.Cluster, api.ErrorMessage())
	}
	return fmt.Errorf("calling %s on cluster %q in %s: %w", action, e.Cluster, e.Region, err)
}
