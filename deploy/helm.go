package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// helmConfig is the Helm SDK's configuration for the cluster of a
// kubeconfig, keeping releases in Secrets as the helm CLI does.
func helmConfig(kubeconfig, namespace string) (*action.Configuration, error) {
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &namespace
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, namespace, "secret"); err != nil {
		return nil, fmt.Errorf("connecting Helm to the cluster: %w", err)
	}
	return cfg, nil
}

// Install installs the chart of dir built into the binary as the release
// namespace/name, or upgrades the release when there is one: `helm upgrade
// --install --create-namespace`.
func Install(ctx context.Context, kubeconfig, dir, namespace, name string, values map[string]any) error {
	ch, err := Chart(dir)
	if err != nil {
		return err
	}
	cfg, err := helmConfig(kubeconfig, namespace)
	if err != nil {
		return err
	}
	history := action.NewHistory(cfg)
	history.Max = 1
	if _, err := history.Run(name); errors.Is(err, driver.ErrReleaseNotFound) {
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace, in.CreateNamespace = name, namespace, true
		in.WaitStrategy, in.Timeout = kube.HookOnlyStrategy, time.Minute
		if _, err := in.RunWithContext(ctx, ch, values); err != nil {
			return fmt.Errorf("installing the chart %s as %s/%s: %w", dir, namespace, name, err)
		}
		return nil
	} else if err != nil {
		return fmt.Errorf("reading the release %s/%s: %w", namespace, name, err)
	}
	up := action.NewUpgrade(cfg)
	up.Namespace = namespace
	up.WaitStrategy, up.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := up.RunWithContext(ctx, name, ch, values); err != nil {
		return fmt.Errorf("upgrading the release %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Uninstall uninstalls the release namespace/name; it returns whether
// there was one.
func Uninstall(kubeconfig, namespace, name string) (bool, error) {
	cfg, err := helmConfig(kubeconfig, namespace)
	if err != nil {
		return false, err
	}
	un := action.NewUninstall(cfg)
	un.WaitStrategy, un.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := un.Run(name); errors.Is(err, driver.ErrReleaseNotFound) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("uninstalling the release %s/%s: %w", namespace, name, err)
	}
	return true, nil
}
