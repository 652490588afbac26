package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// EKS reads a cluster and its Fargate profiles from the EKS API.
type EKS struct {
	Client  *eks.Client
	Cluster string
	Region  string
}

// NewEKS returns a client of the EKS API with the SDK's default credential
// chain. The region is t.Region, else the SDK's (AWS_REGION, the profile's),
// else the kubeconfig's; the cluster t.ClusterName, else the kubeconfig's.
func NewEKS(ctx context.Context, t Target, kube *Kube) (*EKS, error) {
	name := t.ClusterName
	if name == "" && kube != nil {
		name = kube.ClusterName
	}
	if name == "" {
		return nil, ErrNoClusterName
	}
	var opts []func(*config.LoadOptions) error
	if t.Region != "" {
		opts = append(opts, config.WithRegion(t.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" && kube != nil {
		cfg.Region = kube.Region
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: give --region or set AWS_REGION")
	}
	client := eks.NewFromConfig(cfg, func(o *eks.Options) {
		if t.EKSEndpoint != "" {
			o.BaseEndpoint = aws.String(t.EKSEndpoint)
		}
	})
	return &EKS{Client: client, Cluster: name, Region: cfg.Region}, nil
}

// Describe returns the cluster's Kubernetes version and VPC.
func (e *EKS) Describe(ctx context.Context) (version, vpcID string, err error) {
	out, err := e.Client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(e.Cluster)})
	if err != nil {
		return "", "", e.explain("eks:DescribeCluster", err)
	}
	c := out.Cluster
	if c.ResourcesVpcConfig != nil {
		vpcID = aws.ToString(c.ResourcesVpcConfig.VpcId)
	}
	return aws.ToString(c.Version), vpcID, nil
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
	case errors.As(err, &op):
		return fmt.Errorf("cannot reach the EKS API for %s on cluster %q in %s: %w", action, e.Cluster, e.Region, op)
	case errors.As(err, &nf):
		return fmt.Errorf("the EKS API in %s knows no cluster named %q (%s)", e.Region, e.Cluster, action)
	case strings.Contains(err.Error(), "failed to retrieve credentials") || strings.Contains(err.Error(), "no EC2 IMDS role found"):
		return fmt.Errorf("no AWS credentials for %s: configure them as for the AWS CLI (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...)", action)
	case errors.As(err, &api) && (api.ErrorCode() == "AccessDeniedException" || api.ErrorCode() == "UnauthorizedOperation"):
		return fmt.Errorf("not allowed to call %s on cluster %q: %s", action, e.Cluster, api.ErrorMessage())
	}
	return fmt.Errorf("calling %s on cluster %q in %s: %w", action, e.Cluster, e.Region, err)
}
