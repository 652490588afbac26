package emulator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// HostChart is a Helm chart of fargatekit whose pod runs on the host when
// it is installed into the emulator: KWOK runs no container. The command
// that installs the chart (such as `spread install --emulator`) fills it
// in, so the chart's package does not import the emulator, and the
// emulator does not import the chart's package.
type HostChart struct {
	// Component names the host process in Processes and its directory in
	// the state directory.
	Component string
	// Namespace and Release name the Helm release. Deployment is the
	// chart's Deployment, whose one container runs on the host.
	Namespace, Release, Deployment string
	// Command is the fargatekit command of the container, such as
	// "spread", "serve". The host runs it with its own binary, so a chart
	// whose container runs anything else is refused.
	Command []string
	// LoopbackFlags are the container's listen flags, such as --listen.
	// Their ":port" becomes "127.0.0.1:port", so the host process listens
	// on loopback only.
	LoopbackFlags []string
	// Install installs the release or upgrades it, as `helm upgrade
	// --install` does.
	Install func(ctx context.Context, kubeconfig, namespace, release string, values map[string]any) error
	// Uninstall uninstalls the release and says whether there was one.
	Uninstall func(kubeconfig, namespace, release string) (bool, error)
}

// HostInstall is what installing a HostChart needs of the running
// emulator and of the caller.
type HostInstall struct {
	// StateDir is the emulator's. The host process keeps its log and
	// kubeconfig in StateDir/Component, and `emulator down` stops it with
	// the rest.
	StateDir string
	// Kubeconfig is the emulator's admin kubeconfig.
	Kubeconfig string
	// Self is the fargatekit binary that stands in for the chart's pod.
	Self string
	// Values are the chart's values. Ports in them come from FreePorts.
	Values map[string]any
	// ReadyURL answers 200 once the host process serves.
	ReadyURL string
}

// HostInstalled says where a HostChart's pod runs on the host.
type HostInstalled struct {
	PID int
	// Log is the host process's log file.
	Log string
}

// Target finds the emulator of stateDir, or the only one when stateDir is
// "": the state directory and its record, for a command that installs a
// chart into it.
func Target(stateDir string) (string, *Record, error) {
	dir := stateDir
	if dir == "" {
		var err error
		if dir, err = Only(StateRoot()); err != nil {
			return "", nil, err
		}
		if dir == "" {
			return "", nil, fmt.Errorf("no emulator in %s: start one with `fargatekit emulator up`, or name its state directory with --state-dir", StateRoot())
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	rec, err := ReadRecord(dir)
	if err != nil {
		return "", nil, err
	}
	if rec == nil {
		return "", nil, fmt.Errorf("%s holds no emulator: give the --state-dir of one (fargatekit emulator list)", dir)
	}
	return dir, rec, nil
}

// AdminClient is a client of the emulator of the state directory dir, as
// its admin.
func AdminClient(dir string) (kubernetes.Interface, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return nil, fmt.Errorf("reading the emulator's kubeconfig (has it been started? fargatekit emulator up): %w", err)
	}
	return kubernetes.NewForConfig(rc)
}

// AWSEnv is the chart value env for a pod that calls the emulator's EKS,
// EC2 and IAM APIs at endpoint.
func AWSEnv(endpoint string) []any {
	return []any{
		map[string]any{"name": "AWS_ENDPOINT_URL_EKS", "value": endpoint},
		map[string]any{"name": "AWS_ENDPOINT_URL_EC2", "value": endpoint},
		map[string]any{"name": "AWS_ENDPOINT_URL_IAM", "value": endpoint},
		// The emulator accepts any credentials, but refuses unsigned requests.
		map[string]any{"name": "AWS_ACCESS_KEY_ID", "value": Credentials.AccessKeyID},
		map[string]any{"name": "AWS_SECRET_ACCESS_KEY", "value": Credentials.SecretAccessKey},
	}
}

// InstallHostChart installs c into the emulator, as into a cluster, and
// runs its pod on the host: this binary runs the Deployment's arguments
// and environment with the service account's token (the chart's RBAC and
// nothing more), on the loopback ports the Service targets, where the
// emulator sends the API server's calls to the Service. A release
// installed before is upgraded and its process replaced.
func InstallHostChart(ctx context.Context, client kubernetes.Interface, c HostChart, in HostInstall) (*HostInstalled, error) {
	dir := filepath.Join(in.StateDir, c.Component)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making %s: %w", dir, err)
	}
	// The process installed before stops, and `emulator up` forgets it.
	if err := ForgetHostProcess(in.StateDir, c.Component); err != nil {
		return nil, err
	}
	if _, err := StopComponent(in.StateDir, c.Component, 5*time.Second); err != nil {
		return nil, fmt.Errorf("stopping the %s installed before: %w", c.Component, err)
	}
	if err := c.Install(ctx, in.Kubeconfig, c.Namespace, c.Release, in.Values); err != nil {
		return nil, err
	}
	args, env, err := c.standIn(ctx, client, in.Kubeconfig, dir)
	if err != nil {
		return nil, err
	}
	inst := &HostInstalled{Log: filepath.Join(dir, c.Component+".log")}
	host := HostProcess{What: strings.Join(c.Command, " "), Component: c.Component, Args: args, Env: env, Log: inst.Log, ReadyURL: in.ReadyURL}
	if inst.PID, err = host.Start(ctx, in.Self); err != nil {
		return nil, err
	}
	// `emulator up` starts it again after `emulator down`.
	if err := SaveHostProcess(in.StateDir, host); err != nil {
		return nil, err
	}
	return inst, nil
}

// UninstallHostChart uninstalls c from the emulator of stateDir and stops
// the process standing in for its pod. It returns whether anything was
// there.
func UninstallHostChart(kubeconfig, stateDir string, c HostChart) (bool, error) {
	found, err := c.Uninstall(kubeconfig, c.Namespace, c.Release)
	if err != nil {
		return false, err
	}
	ran, err := StopComponent(stateDir, c.Component, 5*time.Second)
	return found || len(ran) > 0, errors.Join(err, ForgetHostProcess(stateDir, c.Component))
}

// standIn returns the command line and environment of the chart's
// container for a process on the host: its arguments, listening on
// loopback, with a kubeconfig of the pod's service account, and its
// environment with the pod's fields filled in.
func (c HostChart) standIn(ctx context.Context, client kubernetes.Interface, adminKubeconfig, dir string) ([]string, []string, error) {
	d, err := client.AppsV1().Deployments(c.Namespace).Get(ctx, c.Deployment, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the chart's Deployment: %w", err)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		return nil, nil, fmt.Errorf("the chart's Deployment has %d containers, want 1", len(pod.Containers))
	}
	container := pod.Containers[0]
	expiry := int64((365 * 24 * time.Hour).Seconds())
	tok, err := client.CoreV1().ServiceAccounts(c.Namespace).CreateToken(ctx, pod.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("getting a token of the service account %s: %w", pod.ServiceAccountName, err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := serviceAccountKubeconfig(adminKubeconfig, kubeconfig, c.Namespace, pod.ServiceAccountName, tok.Status.Token); err != nil {
		return nil, nil, err
	}
	cmdline := append(slices.Clone(container.Command), container.Args...)
	if len(cmdline) < len(c.Command) || !slices.Equal(cmdline[:len(c.Command)], c.Command) {
		return nil, nil, fmt.Errorf("the chart's container runs %q, not %s", strings.Join(cmdline, " "), strings.Join(c.Command, " "))
	}
	args := append(slices.Clone(c.Command), "--kubeconfig", kubeconfig)
	for _, a := range cmdline[len(c.Command):] {
		for _, flag := range c.LoopbackFlags {
			if port, ok := strings.CutPrefix(a, flag+"=:"); ok {
				a = flag + "=127.0.0.1:" + port
			}
		}
		args = append(args, a)
	}
	// POD_NAME of the process on the host.
	podName := c.Release + "-host"
	var env []string
	for _, e := range container.Env {
		v := e.Value
		if e.ValueFrom != nil {
			switch {
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				v = podName
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				v = c.Namespace
			default:
				return nil, nil, fmt.Errorf("the chart's container has env %s from a source the emulator does not fill", e.Name)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return args, env, nil
}

// serviceAccountKubeconfig writes a kubeconfig of the admin's cluster with
// the service account's token.
func serviceAccountKubeconfig(admin, path, namespace, account, token string) error {
	cfg, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		return fmt.Errorf("reading the emulator's kubeconfig: %w", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.Clusters[ctx.Cluster] == nil {
		return errors.New("the emulator's kubeconfig has no current cluster")
	}
	out := clientcmdapi.NewConfig()
	out.Clusters["emulator"] = cfg.Clusters[ctx.Cluster]
	out.AuthInfos[account] = &clientcmdapi.AuthInfo{Token: token}
	out.Contexts[account] = &clientcmdapi.Context{Cluster: "emulator", AuthInfo: account, Namespace: namespace}
	out.CurrentContext = account
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		return fmt.Errorf("writing the service account's kubeconfig: %w", err)
	}
	return nil
}
