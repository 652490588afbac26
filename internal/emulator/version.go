package emulator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/renameio/v2/maybe"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/pkg/eks"
)

// EmulationRange is how many minor versions below its own a Kubernetes
// control plane emulates with --emulated-version (compatibility versions,
// KEP-4330: a 1.35 build takes 1.32 to 1.35).
const EmulationRange = 3

// EmulatedVersion is the version a control plane built at minor version
// binary serves for a cluster at version: version itself within the
// binary's range, the nearest end of the range outside it. An invalid
// version is served as binary.
func EmulatedVersion(binary, version string) string {
	bmaj, bmin, err := majorMinor(binary)
	if err != nil {
		return binary
	}
	vmaj, vmin, err := majorMinor(version)
	switch {
	case err != nil || vmaj > bmaj || vmaj == bmaj && vmin >= bmin:
		return binary
	case vmaj < bmaj || vmin < bmin-EmulationRange:
		return fmt.Sprintf("%d.%d", bmaj, max(bmin-EmulationRange, 0))
	}
	return fmt.Sprintf("%d.%d", vmaj, vmin)
}

// majorMinor splits a version into its numbers.
func majorMinor(v string) (major, minor int, err error) {
	m, err := eks.ParseMinor(v)
	if err != nil {
		return 0, 0, err
	}
	a, b, _ := strings.Cut(m, ".")
	major, _ = strconv.Atoi(a) // ParseMinor returned digits
	minor, _ = strconv.Atoi(b)
	return major, minor, nil
}

// binaryVersion is the minor version of a kube-apiserver binary.
func binaryVersion(ctx context.Context, apiserver string) (string, error) {
	out, err := exec.CommandContext(ctx, apiserver, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("asking %s its version: %w", apiserver, err)
	}
	// "Kubernetes v1.35.4"
	v, err := eks.ParseMinor(strings.TrimPrefix(strings.TrimSpace(string(out)), "Kubernetes "))
	if err != nil {
		return "", fmt.Errorf("reading the version of %s: %w", apiserver, err)
	}
	return v, nil
}

// emulatedVersion is the version the API server emulates, from its
// /version.
func (o *Options) emulatedVersion(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(o.BinDir, "kubectl"), "--kubeconfig", o.kwokKubeconfig(),
		"get", "--raw", "/version", "--request-timeout", "5s").Output()
	if err != nil {
		return "", fmt.Errorf("reading the API server's /version: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("reading the API server's /version: %w", err)
	}
	return info.EmulationMajor + "." + info.EmulationMinor, nil
}

// componentArg is an argument of a control plane component.
// A componentArg is an argument of a control-plane component. A repeated
// one (of a flag whose every value counts) is there when the component has
// the flag with that value; any other is the component's last value of its
// flag.
type componentArg struct {
	component, key, value string
	repeated              bool
}

// servingArgs are the arguments with which the control plane serves
// version: its API server, controller-manager and scheduler emulate it.
// They run without leader election, since one of each runs: restarted,
// they work at once, not once the lease of the one before expired (15 s).
func servingArgs(version string) []componentArg {
	var args []componentArg
	for _, c := range []string{ComponentAPIServer, ComponentControllerManager, ComponentScheduler} {
		args = append(args, componentArg{component: c, key: "emulated-version", value: version})
	}
	return append(args, componentArg{component: ComponentControllerManager, key: "leader-elect", value: "false"},
		componentArg{component: ComponentScheduler, key: "leader-elect", value: "false"})
}

// extraArgs are args as kwokctl create flags, each component's first
// before any second: kwokctl 0.8 files a component's later arguments under
// the position of its first among all the flags, which is its place among
// the components only then.
func extraArgs(args []componentArg) []string {
	var first, rest []string
	seen := map[string]bool{}
	for _, a := range args {
		flag := []string{"--extra-args", a.component + "=" + a.key + "=" + a.value}
		if seen[a.component] {
			rest = append(rest, flag...)
			continue
		}
		seen[a.component] = true
		first = append(first, flag...)
	}
	return append(first, rest...)
}

// ServeVersion makes the control plane serve Kubernetes version: its API
// server, controller-manager and scheduler emulate it (EmulatedVersion). It
// restarts the control plane when that changes what it emulates (or when it
// does not run), and returns the version it serves.
func (o *Options) ServeVersion(ctx context.Context, version string) (string, error) {
	// The binary the control plane runs: kwokctl's copy, not BinDir's.
	binary, err := binaryVersion(ctx, filepath.Join(o.clusterDir(), "bin", "kube-apiserver"))
	if err != nil {
		return "", err
	}
	want := EmulatedVersion(binary, version)
	path := filepath.Join(o.clusterDir(), "kwok.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the control plane's configuration: %w", err)
	}
	updated, changed, err := setArgs(data, servingArgs(want))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	unlock, err := o.lockControlPlane(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	if !changed && o.controlPlaneReady(ctx) {
		if got, err := o.emulatedVersion(ctx); err == nil && got == want {
			return want, nil
		}
	}
	slog.Info("restarting the control plane", "emulates", want, "reconfigured", changed)
	o.stopControlPlane(ctx)
	if changed {
		if err := maybe.WriteFile(path, updated, 0o600); err != nil {
			return "", fmt.Errorf("writing the control plane's configuration: %w", err)
		}
	}
	if err := o.startStopped(ctx); err != nil {
		return "", err
	}
	// kwokctl start succeeds even when the control plane did not get ready.
	got, err := o.emulatedVersion(ctx)
	if err == nil && got != want {
		err = fmt.Errorf("the control plane serves %s, not %s", got, want)
	}
	return want, err
}

// setArgs sets the arguments of a kwokctl configuration's components
// (kwok.yaml: the arguments kwokctl starts them with, and the patches it
// made them from); the file's other documents, kwok's stages, stay as they
// are. It reports whether an argument changed.
func setArgs(data []byte, args []componentArg) ([]byte, bool, error) {
	sep := []byte("\n---\n")
	docs := bytes.Split(data, sep)
	for i, doc := range docs {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, false, fmt.Errorf("reading the kwokctl configuration's document %d: %w", i+1, err)
		}
		if meta.Kind != "KwokctlConfiguration" {
			continue
		}
		updated, changed, err := setConfigArgs(doc, args)
		if err != nil || !changed {
			return data, false, err
		}
		docs[i] = updated
		return bytes.Join(docs, sep), true, nil
	}
	return nil, false, errors.New("no KwokctlConfiguration in the kwokctl configuration")
}

// setConfigArgs does the work of setArgs on the KwokctlConfiguration
// document.
func setConfigArgs(data []byte, args []componentArg) ([]byte, bool, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false, fmt.Errorf("reading the kwokctl configuration: %w", err)
	}
	byName := func(key string) map[string]map[string]any {
		out := map[string]map[string]any{}
		list, _ := doc[key].([]any)
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				name, _ := m["name"].(string)
				out[name] = m
			}
		}
		return out
	}
	components, patches := byName("components"), byName("componentsPatches")
	changed := false
	for _, a := range args {
		c, ok := components[a.component]
		if !ok {
			return nil, false, fmt.Errorf("the kwokctl configuration has no component %s", a.component)
		}
		flag := "--" + a.key + "="
		list, _ := c["args"].([]any)
		i := -1 // the last of a flag given twice is the one that counts
		for j, v := range list {
			if s, _ := v.(string); strings.HasPrefix(s, flag) && (!a.repeated || s == flag+a.value) {
				i = j
			}
		}
		switch {
		case i < 0:
			list = append(list, flag+a.value)
		case list[i] != flag+a.value:
			list[i] = flag + a.value
		default:
			continue
		}
		c["args"], changed = list, true
		if p, ok := patches[a.component]; ok {
			extra, _ := p["extraArgs"].([]any)
			extra = slices.DeleteFunc(extra, func(v any) bool {
				m, _ := v.(map[string]any)
				return m["key"] == a.key && (!a.repeated || m["value"] == a.value)
			})
			p["extraArgs"] = append(extra, map[string]any{"key": a.key, "override": false, "value": a.value})
		}
	}
	if !changed {
		return data, false, nil
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, false, fmt.Errorf("writing the kwokctl configuration: %w", err)
	}
	return out, true, nil
}

// releaseNodes stops kwok-controller and deletes the nodes' Leases, which
// it holds under an identity of its process: a new kwok-controller takes a
// node held by another only once its Lease expires (kwokctl's 200 s), and
// its pods would not be started or deleted until then. It makes the Leases
// again when it starts.
func (o *Options) releaseNodes(ctx context.Context) error {
	if _, err := StopComponent(o.StateDir, ComponentKwok, 5*time.Second); err != nil {
		return fmt.Errorf("stopping kwok-controller: %w", err)
	}
	if err := o.forget(ComponentKwok); err != nil {
		return err
	}
	client, err := o.controlPlaneClient()
	if err != nil {
		return err
	}
	// The Leases held for an AZ outage stay held (faults.go).
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	list, err := leases.List(ctx, metav1.ListOptions{})
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing the nodes' leases: %w", err)
	}
	for _, l := range list.Items {
		if outageHeld(&l) {
			continue
		}
		if err := leases.Delete(ctx, l.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the lease of node %s: %w", l.Name, err)
		}
	}
	return nil
}

// heldBefore reports whether a node's Lease was last renewed before since
// and has not expired: a kwok-controller stopped since then holds it (its
// Leases could not be deleted: the API server was down), and the one
// started after it waits until it expires. The List is tried for a few
// seconds, in case the API server does not serve Leases yet.
func (o *Options) heldBefore(ctx context.Context, since time.Time) (bool, error) {
	client, err := o.controlPlaneClient()
	if err != nil {
		return false, err
	}
	var leases *coordinationv1.LeaseList
	var listErr error
	err = wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		leases, listErr = client.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
		return listErr == nil, nil
	})
	if err != nil {
		return false, fmt.Errorf("listing the nodes' leases: %w", cmp.Or(listErr, err))
	}
	now := time.Now()
	return slices.ContainsFunc(leases.Items, func(l coordinationv1.Lease) bool {
		spec := l.Spec
		if spec.HolderIdentity == nil || spec.RenewTime == nil || spec.LeaseDurationSeconds == nil || outageHeld(&l) {
			return false
		}
		renewed := spec.RenewTime.Time
		return renewed.Before(since) && renewed.Add(time.Duration(*spec.LeaseDurationSeconds)*time.Second).After(now)
	}), nil
}

// controlPlaneClient is a client of the control plane's API server, as its
// components reach it.
func (o *Options) controlPlaneClient() (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kwokKubeconfig())
	if err != nil {
		return nil, fmt.Errorf("reading the control plane's kubeconfig: %w", err)
	}
	cfg.Timeout = 10 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the control plane: %w", err)
	}
	return client, nil
}
