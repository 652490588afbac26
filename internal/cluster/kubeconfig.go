// Package cluster connects to a running EKS cluster and reads it for scan,
// fix and upgrade: the Kubernetes objects through client-go, with paginated
// lists, and the Fargate profiles through the EKS API with aws-sdk-go-v2.
package cluster

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Target is how to reach a cluster: the kubeconfig rules of kubectl
// (--kubeconfig, KUBECONFIG, ~/.kube/config; --context) and the EKS API.
type Target struct {
	Kubeconfig string
	Context    string
	// ClusterName overrides the name read from the kubeconfig.
	ClusterName string
	// Region overrides the AWS SDK's region (AWS_REGION, the profile's) and
	// the region read from the kubeconfig.
	Region string
	// EKSEndpoint overrides the EKS API's endpoint (AWS_ENDPOINT_URL_EKS).
	EKSEndpoint string
	// EC2Endpoint overrides the EC2 API's endpoint (AWS_ENDPOINT_URL_EC2).
	EC2Endpoint string
}

// Kube is a loaded kubeconfig context.
type Kube struct {
	Config *rest.Config
	// Context is the name of the context used.
	Context string
	// ClusterName, Region and AWSProfile are what the kubeconfig says of the
	// EKS cluster and of the AWS identity its token command uses, empty when
	// it says nothing.
	ClusterName, Region, AWSProfile string
}

// LoadKube reads the kubeconfig as kubectl does. The error names the file
// or context at fault.
func LoadKube(t Target) (*Kube, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = t.Kubeconfig
	if t.Kubeconfig != "" {
		if _, err := os.Stat(t.Kubeconfig); err != nil {
			return nil, fmt.Errorf("reading the kubeconfig: %w", err)
		}
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: t.Context})
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig %s: %w", kubeconfigFiles(rules), err)
	}
	if len(raw.Contexts) == 0 && t.Kubeconfig == "" && t.Context == "" {
		// In a pod, with no kubeconfig: its service account, as kubectl does.
		if cfg, err := rest.InClusterConfig(); err == nil {
			cfg.QPS, cfg.Burst = 50, 100
			return &Kube{Config: cfg, Context: "in-cluster"}, nil
		}
	}
	if len(raw.Contexts) == 0 {
		return nil, fmt.Errorf("no kubeconfig with a context at %s: give --kubeconfig or set KUBECONFIG "+
			"(for the emulator: eval \"$(fargatekit emulator env)\")", kubeconfigFiles(rules))
	}
	name := t.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		return nil, fmt.Errorf("the kubeconfig %s has no current context: give --context", kubeconfigFiles(rules))
	}
	if raw.Contexts[name] == nil {
		return nil, fmt.Errorf("the kubeconfig %s has no context %q", kubeconfigFiles(rules), name)
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("no kubeconfig found (%s): give --kubeconfig or set KUBECONFIG", kubeconfigFiles(rules))
		}
		return nil, fmt.Errorf("reading the kubeconfig %s, context %q: %w", kubeconfigFiles(rules), name, err)
	}
	// kubectl's limits: lists of every kind at once must not queue behind
	// client-go's default of 5 requests per second.
	cfg.QPS, cfg.Burst = 50, 100
	k := &Kube{Config: cfg, Context: name}
	k.ClusterName, k.Region, k.AWSProfile = EKSCluster(&raw, name)
	return k, nil
}

func kubeconfigFiles(rules *clientcmd.ClientConfigLoadingRules) string {
	if rules.ExplicitPath != "" {
		return rules.ExplicitPath
	}
	return strings.Join(rules.Precedence, string(os.PathListSeparator))
}

// EKSCluster reads the EKS cluster's name and region from a kubeconfig
// context: the --cluster-name (and --region) arguments of an
// `aws eks get-token` exec entry, the -i argument of aws-iam-authenticator,
// or the cluster ARN that `aws eks update-kubeconfig` (and the emulator)
// names the cluster and context by; and the AWS profile the token command
// runs with (--profile, or AWS_PROFILE in its environment). Empty when none
// says.
func EKSCluster(cfg *clientcmdapi.Config, context string) (name, region, profile string) {
	ctx := cfg.Contexts[context]
	if ctx == nil {
		return "", "", ""
	}
	if user := cfg.AuthInfos[ctx.AuthInfo]; user != nil && user.Exec != nil {
		name, region, profile = execArgs(user.Exec)
	}
	for _, s := range []string{ctx.Cluster, context} {
		if a, err := arn.Parse(s); err == nil && a.Service == "eks" && strings.HasPrefix(a.Resource, "cluster/") {
			if name == "" {
				name = strings.TrimPrefix(a.Resource, "cluster/")
			}
			if region == "" {
				region = a.Region
			}
		}
	}
	return name, region, profile
}

// execArgs reads the cluster name, region and AWS profile of a token
// command: aws eks get-token --cluster-name N [--region R] [--profile P],
// or aws-iam-authenticator token -i N; AWS_REGION, AWS_DEFAULT_REGION and
// AWS_PROFILE in its environment.
func execArgs(e *clientcmdapi.ExecConfig) (name, region, profile string) {
	args := e.Args
	for i := 0; i < len(args); i++ {
		key, value, inline := strings.Cut(args[i], "=")
		if !inline {
			if i+1 >= len(args) {
				break
			}
			value = args[i+1]
		}
		switch key {
		case "--cluster-name", "--cluster-id", "-i":
			name = value
		case "--region":
			region = value
		case "--profile":
			profile = value
		default:
			continue
		}
		if !inline {
			i++
		}
	}
	for _, env := range e.Env {
		switch {
		case region == "" && (env.Name == "AWS_REGION" || env.Name == "AWS_DEFAULT_REGION"):
			region = env.Value
		case profile == "" && env.Name == "AWS_PROFILE":
			profile = env.Value
		}
	}
	return name, region, profile
}

// ErrNoClusterName says that no cluster name was given or found.
var ErrNoClusterName = errors.New("no EKS cluster name: give --cluster-name, or use a kubeconfig written by `aws eks update-kubeconfig`")
