// Package spreadcmd implements `fargatekit spread`: Fargate pods balanced
// across AZs by a mutating webhook and a rebalancer.
package spreadcmd

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/fargatekit/fargatekit/internal/cli/clusterflags"
	"github.com/fargatekit/fargatekit/internal/cli/hostchart"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/profiles"
	"github.com/fargatekit/fargatekit/internal/spreadserver"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// NewCommand returns the spread command.
func NewCommand(s streams.Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spread",
		Short: "Balance each workload's Fargate pods across AZs: a webhook that places them, a rebalancer that evens them out",
		Long: "fargate-scheduler ignores affinity and topology spread and draws each pod's subnet at random, so\n" +
			"replicas pile into one AZ. spread fixes it with one Deployment per app: give each profile's pods one\n" +
			"profile per AZ (same selectors, one subnet each); spread's webhook then sets, on each opted-in pod, the\n" +
			"label eks.amazonaws.com/fargate-profile of the AZ where its workload has the fewest pods, and EKS's\n" +
			"webhook honours it. A rebalancer evicts, one at a time and within PodDisruptionBudgets, from the\n" +
			"fullest AZ of a workload that is skewed anyway (after a scale-down, say).\n\n" +
			"Pods opt in with the label spread.fargatekit.io/enabled=true on their namespace or on the pod\n" +
			"template; the rebalancer evicts only in opted-in namespaces. See docs/spread.md.",
		Example: "  # The per-AZ profiles to add first, from an eksctl config\n" +
			"  fargatekit spread profiles --profiles cluster.yaml\n\n" +
			"  # On the emulator: start spread and register its webhook\n" +
			"  fargatekit spread install --emulator\n" +
			"  kubectl label namespace apps spread.fargatekit.io/enabled=true\n" +
			"  kubectl -n apps rollout restart deployment web\n\n" +
			"  # Run it yourself against a cluster (the Helm chart runs it in the cluster)\n" +
			"  fargatekit spread serve --tls-cert-file tls.crt --tls-key-file tls.key",
	}
	cmd.AddCommand(newProfiles(s), newServe(), newInstall(s), hostchart.NewUninstall(s, "spread", spreadChart))
	return cmd
}

func newServe() *cobra.Command {
	var t cluster.Target
	var zonesFile, secret, service, webhookConfiguration, method string
	o := spreadserver.Options{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run spread's webhook (TLS), rebalancer and metrics in the foreground",
		Long: "serve reads the per-AZ Fargate profiles (ACTIVE, one subnet each) from the EKS API and their AZs from\n" +
			"EC2 DescribeSubnets (or from --zones), and again every --refresh; when a read fails it keeps the last\n" +
			"mapping and says so in its log and in fargatekit_spread_zone_refresh_errors_total. It serves the\n" +
			"admission webhook on --listen (TLS) and /metrics, /healthz and /readyz on --metrics-listen. The\n" +
			"rebalancer runs on the replica that holds the Lease fargatekit-spread in --namespace.\n\n" +
			"The serving certificate comes from --tls-cert-file and --tls-key-file (cert-manager's, say), or from\n" +
			"the Secret --certificate-secret in --namespace: the first replica makes it (a CA and a certificate for\n" +
			"the Service --service, valid a year, renewed 30 days before it expires) and puts the CA into the\n" +
			"caBundle of --webhook-configuration, which owns the Secret. Both are read again every --refresh.\n\n" +
			"The --zones file gives the AZ of each per-AZ profile instead of EC2, and limits spread to them:\n" +
			"  profiles:\n" +
			"    apps-us-east-1a: us-east-1a\n" +
			"    apps-us-east-1b: us-east-1b\n\n" +
			"What it cannot start with (a certificate, the first read of the profiles, a zone given to a profile\n" +
			"that does not exist or has several subnets, a port) stops it at start, naming the flag or field.",
		Example: "  # As the Helm chart runs it\n" +
			"  fargatekit spread serve --certificate-secret fargatekit-spread-tls --service fargatekit-spread\n\n" +
			"  # With a certificate of your own, evicting nothing\n" +
			"  fargatekit spread serve --tls-cert-file tls.crt --tls-key-file tls.key --dry-run --log-level info",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			files := o.CertFile != "" || o.KeyFile != ""
			switch {
			case files && secret != "":
				return errors.New("give --certificate-secret or --tls-cert-file and --tls-key-file, not both")
			case files && (o.CertFile == "" || o.KeyFile == ""):
				return errors.New("--tls-cert-file and --tls-key-file go together")
			case !files && secret == "":
				return errors.New("give --certificate-secret (and --service), or --tls-cert-file and --tls-key-file: the API server calls webhooks over TLS")
			case secret != "" && service == "":
				return errors.New("--certificate-secret needs --service: the certificate is for the Service's names")
			case o.Refresh < minRefresh:
				return fmt.Errorf("--refresh %s: must be at least %s, how often the profiles (from the EKS and EC2 APIs) and the certificate are read again", o.Refresh, minRefresh)
			}
			if err := checkEvictionInterval(o.EvictionInterval); err != nil {
				return err
			}
			if err := checkCaps(o.WorkloadEvictionsPerHour, o.EvictionsPerMinute); err != nil {
				return err
			}
			if err := checkAvailability(o.UnavailableAfter, o.ZoneRetry); err != nil {
				return err
			}
			var err error
			if o.Method, err = spread.ParseMethod(method); err != nil {
				return fmt.Errorf("--method: %w", err)
			}
			if zonesFile != "" && o.Method != spread.ByProfile {
				return errors.New("--zones gives the AZs of per-AZ profiles: it goes with --method profile")
			}
			if zonesFile != "" {
				if o.AZs, err = spreadserver.ReadZones(zonesFile); err != nil {
					return err
				}
			}
			kube, err := cluster.LoadKube(t)
			if err != nil {
				return err
			}
			o.Client, err = kubernetes.NewForConfig(kube.Config)
			if err != nil {
				return fmt.Errorf("connecting to %s: %w", kube.Config.Host, err)
			}
			if secret != "" {
				o.Certificates = &spreadserver.Certificates{Client: o.Client, Namespace: o.Namespace, Secret: secret,
					Service: service, WebhookConfiguration: webhookConfiguration}
			}
			if o.AWS, err = cluster.NewEKS(cmd.Context(), t, kube); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return spreadserver.Serve(ctx, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&t.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: KUBECONFIG, else ~/.kube/config, else the pod's service account)")
	fl.StringVar(&t.Context, "context", "", "kubeconfig context (default: the current context)")
	fl.StringVar(&t.ClusterName, "cluster-name", "", "EKS cluster name (default: read from the kubeconfig context)")
	fl.StringVar(&t.Region, "region", "", "AWS region of the cluster (default: the kubeconfig context's, else AWS_REGION)")
	fl.StringVar(&t.EKSEndpoint, "eks-endpoint", "", "EKS API endpoint (default: AWS_ENDPOINT_URL_EKS, else AWS's)")
	fl.StringVar(&t.EC2Endpoint, "ec2-endpoint", "", "EC2 API endpoint (default: AWS_ENDPOINT_URL_EC2, else AWS's)")
	fl.StringVar(&method, "method", string(spread.ByProfile), "how a pod is sent to its AZ: profile (the label of a per-AZ profile) or node-selector (a topology.kubernetes.io/zone node selector on a multi-subnet profile; unconfirmed on AWS)")
	fl.StringVar(&zonesFile, "zones", "", "file giving each per-AZ profile's AZ (profiles: {NAME: AZ}) instead of EC2")
	fl.StringVar(&o.WebhookAddr, "listen", ":8443", "address of the webhook (TLS)")
	fl.StringVar(&secret, "certificate-secret", "", "Secret in --namespace that keeps the serving certificate, made when missing")
	fl.StringVar(&service, "service", "", "the webhook's Service in --namespace, whose names the certificate is for")
	fl.StringVar(&webhookConfiguration, "webhook-configuration", spreadserver.WebhookConfigurationName, "MutatingWebhookConfiguration whose caBundle gets the CA of --certificate-secret")
	fl.StringVar(&o.CertFile, "tls-cert-file", "", "the webhook's serving certificate (PEM)")
	fl.StringVar(&o.KeyFile, "tls-key-file", "", "the webhook's private key (PEM)")
	clusterflags.AddMetricsListen(fl, &o.MetricsAddr)
	fl.DurationVar(&o.Refresh, "refresh", time.Minute, "how often to read the per-AZ profiles and the certificate again")
	fl.BoolVar(&o.Rebalance, "rebalance", true, "run the rebalancer (on the replica holding the lease)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "the rebalancer says which pods it would evict (log, event, metric) and evicts none")
	fl.DurationVar(&o.EvictionInterval, "eviction-interval", 10*time.Second, "at most one rebalancing eviction per interval")
	fl.IntVar(&o.WorkloadEvictionsPerHour, "workload-evictions-per-hour", spreadserver.DefaultWorkloadEvictionsPerHour, "at most this many rebalancing evictions of one workload's pods in any hour")
	fl.IntVar(&o.EvictionsPerMinute, "evictions-per-minute", spreadserver.DefaultEvictionsPerMinute, "at most this many rebalancing evictions in the cluster in any minute")
	fl.DurationVar(&o.UnavailableAfter, "unavailable-after", spreadserver.DefaultUnavailableAfter, "an AZ where a pod spread sent waits unscheduled this long is left out, and its waiting pods replaced")
	fl.DurationVar(&o.ZoneRetry, "zone-retry", spreadserver.DefaultZoneRetry, "how long an unavailable AZ is left out before it is tried again, one pod at a time")
	fl.StringSliceVar(&o.ExcludeZones, "exclude-zones", nil, "AZs spread never sends pods to (comma-separated)")
	fl.StringVar(&o.Namespace, "namespace", cmp.Or(os.Getenv("POD_NAMESPACE"), "kube-system"), "namespace spread runs in: its Lease, certificate Secret and Service (default: POD_NAMESPACE, else kube-system)")
	fl.StringVar(&o.Identity, "identity", os.Getenv("POD_NAME"), "this replica's name in the Lease (default: POD_NAME, else host and pid)")
	return cmd
}

// minRefresh is the shortest --refresh: each one reads the EKS and EC2
// APIs, which throttle callers that poll faster.
const minRefresh = 10 * time.Second

// minEvictionInterval is the shortest --eviction-interval: the rebalancer
// waits that long between two evictions, so a shorter one would evict a
// workload's pods faster than their replacements start.
const minEvictionInterval = time.Second

// checkEvictionInterval refuses an --eviction-interval below the minimum
// (0 made the leader panic, and every replica then crash-looped, taking the
// webhook down).
func checkEvictionInterval(d time.Duration) error {
	if d < minEvictionInterval {
		return fmt.Errorf("--eviction-interval %s: must be at least %s, the time between two rebalancing evictions", d, minEvictionInterval)
	}
	return nil
}

// checkCaps refuses caps on evictions below one: zero would stop the
// rebalancer without saying so (--rebalance=false does that).
func checkCaps(perHour, perMinute int) error {
	switch {
	case perHour < 1:
		return fmt.Errorf("--workload-evictions-per-hour %d: must be at least 1 (--rebalance=false turns the rebalancer off)", perHour)
	case perMinute < 1:
		return fmt.Errorf("--evictions-per-minute %d: must be at least 1 (--rebalance=false turns the rebalancer off)", perMinute)
	}
	return nil
}

// minAvailability is the shortest --unavailable-after and --zone-retry:
// shorter, a pod that starts slowly would take its AZ out, and an AZ out
// would be tried again before anything changed.
const minAvailability = 10 * time.Second

// checkAvailability refuses an --unavailable-after or --zone-retry below
// the minimum.
func checkAvailability(after, retry time.Duration) error {
	switch {
	case after < minAvailability:
		return fmt.Errorf("--unavailable-after %s: must be at least %s, how long a pod may wait unscheduled before its AZ is left out", after, minAvailability)
	case retry < minAvailability:
		return fmt.Errorf("--zone-retry %s: must be at least %s, how long an unavailable AZ is left out", retry, minAvailability)
	}
	return nil
}

func newInstall(s streams.Streams) *cobra.Command {
	var stateDir, method string
	var onEmulator, dryRun bool
	var evictionInterval, unavailableAfter, zoneRetry time.Duration
	cmd := &cobra.Command{
		Use:   "install --emulator",
		Short: "Install spread's Helm chart into the running emulator and run its pod on this host",
		Long: "install --emulator installs the Helm chart built into fargatekit (deploy/charts/fargatekit-spread) as the\n" +
			"release fargatekit-spread/fargatekit-spread, as `helm upgrade --install` would in a cluster. KWOK runs no\n" +
			"container, so the chart's pod runs on this host: `fargatekit spread serve` with the Deployment's\n" +
			"arguments and environment and a token of its service account (the chart's RBAC, nothing more), on\n" +
			"loopback ports. The emulator sends the API server's calls to the chart's Service there. The webhook\n" +
			"configuration 0100-spread.fargatekit.io is called before EKS's Fargate webhook. `emulator down` stops\n" +
			"the process; `spread uninstall --emulator` uninstalls the release.\n\n" +
			"Install it in a cluster with helm (docs/spread.md).",
		Example: "  fargatekit spread install --emulator\n" +
			"  fargatekit spread install --emulator --state-dir /tmp/fk --dry-run",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !onEmulator {
				return errors.New("only --emulator is supported here: install spread in a cluster with helm install fargatekit-spread deploy/charts/fargatekit-spread (docs/spread.md)")
			}
			if err := checkEvictionInterval(evictionInterval); err != nil {
				return err
			}
			if err := checkAvailability(unavailableAfter, zoneRetry); err != nil {
				return err
			}
			em, err := hostchart.Open(stateDir)
			if err != nil {
				return err
			}
			dir, rec, client, self := em.Dir, em.Record, em.Client, em.Self
			in := emulatorInstall{StateDir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"),
				AWSEndpoint: fmt.Sprintf("http://127.0.0.1:%d", rec.EKSPort), Region: rec.Config.Metadata.Region,
				ClusterName: rec.Config.Metadata.Name, Self: self}
			in.DryRun, in.EvictionInterval, in.UnavailableAfter, in.ZoneRetry = dryRun, evictionInterval, unavailableAfter, zoneRetry
			if in.Method, err = spread.ParseMethod(method); err != nil {
				return fmt.Errorf("--method: %w", err)
			}
			inst, err := installEmulator(cmd.Context(), client, in)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "Helm release %s installed; its pod runs on this host (pid %d)\n", inst.Release, inst.PID)
			fmt.Fprintf(s.Out, "spread serves the webhook %s at %s\n", spreadserver.WebhookConfigurationName, inst.WebhookURL)
			fmt.Fprintf(s.Out, "metrics: %s\nlog: %s\n", inst.MetricsURL, inst.Log)
			fmt.Fprintf(s.Out, "opt pods in: kubectl label namespace NAME %s=true\n", "spread.fargatekit.io/enabled")
			return nil
		},
	}
	cmd.Flags().BoolVar(&onEmulator, "emulator", false, "install for the emulator (required)")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "the emulator's state directory (default: the only emulator)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "the rebalancer evicts nothing, only says what it would evict")
	cmd.Flags().StringVar(&method, "method", string(spread.ByProfile), "the chart's method: profile or node-selector (which the emulator honours only with the setting honourZoneSelector)")
	cmd.Flags().DurationVar(&evictionInterval, "eviction-interval", 10*time.Second, "at most one rebalancing eviction per interval")
	cmd.Flags().DurationVar(&unavailableAfter, "unavailable-after", spreadserver.DefaultUnavailableAfter, "the chart's availability.unavailableAfter")
	cmd.Flags().DurationVar(&zoneRetry, "zone-retry", spreadserver.DefaultZoneRetry, "the chart's availability.zoneRetry")
	return cmd
}

func newProfiles(s streams.Streams) *cobra.Command {
	var t cluster.Target
	var file, format string
	cmd := &cobra.Command{
		Use:   "profiles (--profiles FILE | --cluster-name NAME)",
		Short: "Print the per-AZ Fargate profiles spread needs, as eksctl YAML, Terraform or AWS CLI commands",
		Long: "spread chooses a pod's AZ by choosing its profile, so each profile whose pods are to be balanced needs\n" +
			"one twin per AZ: the same selectors and pod execution role, one subnet each, named <profile>-<AZ>.\n" +
			"profiles prints them for every profile with subnets in several AZs, read from an eksctl ClusterConfig\n" +
			"(--profiles; a profile without subnets runs in vpc.subnets.private) or from the live cluster (the EKS\n" +
			"API for the profiles, EC2 DescribeSubnets for the AZs). Add them next to the profiles they split:\n" +
			"pods that are not opted in keep going to the original, first by name. EKS creates profiles one at a\n" +
			"time per cluster; the default quota is 10 profiles per cluster (a warning says when the new ones\n" +
			"would pass it).\n\n" +
			"Exit codes: 0 printed (or nothing to add); 2 nothing could be read or split (unknown subnets or AZs).",
		Example: "  fargatekit spread profiles --profiles cluster.yaml\n" +
			"  fargatekit spread profiles --profiles cluster.yaml --format terraform > fargate-per-az.tf\n" +
			"  fargatekit spread profiles --cluster-name prod --format aws-cli > add-profiles.sh\n" +
			"  fargatekit spread profiles --cluster-name prod --region eu-west-1",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "eksctl" && format != "terraform" && format != "aws-cli" {
				return fmt.Errorf("--format %q: want eksctl, terraform or aws-cli", format)
			}
			set, err := readProfiles(cmd, file, t)
			if err != nil {
				return err
			}
			var add []fargate.Profile
			var errs []error
			for _, p := range set.Profiles {
				split, err := spread.Split(p, set.PrivateSubnets, set.SubnetAZ)
				errs = append(errs, err)
				for _, q := range split {
					if !slices.ContainsFunc(set.Profiles, func(e fargate.Profile) bool { return e.Name == q.Name }) {
						add = append(add, q)
					}
				}
			}
			err = errors.Join(errs...)
			if err != nil && len(add) == 0 {
				return err
			}
			if err != nil {
				fmt.Fprintf(s.ErrOut, "warning: %v\n", err)
			}
			if len(add) == 0 {
				fmt.Fprintln(s.ErrOut, "no profile to add: none has subnets in several AZs without its per-AZ twins")
				return nil
			}
			limits := fargate.DefaultLimits
			if n := len(set.Profiles) + len(add); n > limits.ProfilesPerCluster {
				fmt.Fprintf(s.ErrOut, "warning: %d profiles with these %d: EKS's default quota is %d per cluster\n", n, len(add), limits.ProfilesPerCluster)
			}
			switch format {
			case "terraform":
				return spreadserver.WriteTerraform(s.Out, set.Cluster, add)
			case "aws-cli":
				return spreadserver.WriteAWSCLI(s.Out, set.Cluster, add)
			}
			return spreadserver.WriteEksctl(s.Out, add)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&file, "profiles", "", "eksctl ClusterConfig (or the emulator's configuration) to read the profiles and subnets from")
	fl.StringVar(&format, "format", "eksctl", "output: eksctl (fargateProfiles YAML), terraform (aws_eks_fargate_profile resources) or aws-cli (a shell script of aws eks create-fargate-profile)")
	fl.StringVar(&t.ClusterName, "cluster-name", "", "read the live cluster of this name through the EKS and EC2 APIs")
	fl.StringVar(&t.Region, "region", "", "AWS region of the live cluster (default: AWS_REGION)")
	fl.StringVar(&t.EKSEndpoint, "eks-endpoint", "", "EKS API endpoint (default: AWS_ENDPOINT_URL_EKS, else AWS's)")
	fl.StringVar(&t.EC2Endpoint, "ec2-endpoint", "", "EC2 API endpoint (default: AWS_ENDPOINT_URL_EC2, else AWS's)")
	return cmd
}

// readProfiles reads the profiles and subnet AZs from a file or the live cluster.
func readProfiles(cmd *cobra.Command, file string, t cluster.Target) (profiles.Set, error) {
	switch {
	case file != "" && t.ClusterName != "":
		return profiles.Set{}, errors.New("give --profiles or --cluster-name, not both")
	case file != "":
		set, err := profiles.ReadFile(file)
		if err != nil && len(set.Profiles) == 0 {
			return set, err
		}
		if set.Format != profiles.FormatEksctl && set.Format != profiles.FormatEmulator {
			return set, fmt.Errorf("%s is %s: spread profiles reads an eksctl ClusterConfig (or --cluster-name for the live cluster)", file, set.Format)
		}
		return set, nil
	case t.ClusterName == "":
		return profiles.Set{}, errors.New("give --profiles FILE (an eksctl ClusterConfig) or --cluster-name NAME (the live cluster)")
	}
	aws, err := cluster.NewEKS(cmd.Context(), t, nil)
	if err != nil {
		return profiles.Set{}, err
	}
	set := profiles.Set{Cluster: t.ClusterName}
	if set.Profiles, err = aws.Profiles(cmd.Context()); err != nil {
		return set, err
	}
	var subnets []string
	for _, p := range set.Profiles {
		subnets = append(subnets, p.Subnets...)
	}
	set.SubnetAZ, err = aws.SubnetZones(cmd.Context(), subnets)
	return set, err
}
