package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/pkg/object"
)

const (
	shop    = "testdata/charts/shop"
	broken  = "testdata/charts/broken"
	base    = "testdata/kustomize/base"
	prod    = "testdata/kustomize/overlays/prod"
	staging = "testdata/kustomize/overlays/staging"
)

// rendered is what the tests look at in a rendered object.
type rendered struct {
	File        string
	Kind        string
	Namespace   string
	Name        string
	Annotations map[string]string
	Replicas    int      // pods at steady state, for objects that make pods
	HostNetwork bool     // of the pod template
	Images      []string // of the pod template's containers
	Requests    string   // the first container's cpu/memory requests
	Storage     string   // the first volume claim template's request
}

// expand renders path and parses the documents as the loader does.
func expand(t *testing.T, o *Options, path string) ([]rendered, error) {
	t.Helper()
	docs, err := expandDocs(t, o, path)
	var out []rendered
	for _, d := range docs {
		manifest.Parse(d.File, d.Data, func(o *object.Object) {
			out = append(out, summarize(o))
		}, func(e manifest.Error) {
			t.Errorf("parsing the rendered %s: %v", d.File, e)
		})
	}
	return out, err
}

func summarize(o *object.Object) rendered {
	r := rendered{File: o.Source.File, Kind: o.Ref.Kind, Namespace: o.Ref.Namespace, Name: o.Ref.Name, Annotations: o.Annotations}
	if o.Pod != nil {
		spec := o.Pod.Template.Spec
		r.Replicas, r.HostNetwork = o.Pod.Replicas, spec.HostNetwork
		for _, c := range spec.Containers {
			r.Images = append(r.Images, c.Image)
		}
		if req := spec.Containers[0].Resources.Requests; len(req) > 0 {
			r.Requests = req.Cpu().String() + "/" + req.Memory().String()
		}
	}
	if s, ok := o.Typed.(*appsv1.StatefulSet); ok && len(s.Spec.VolumeClaimTemplates) > 0 {
		r.Storage = s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String()
	}
	return r
}

func TestHelm(t *testing.T) {
	redis := func(namespace, name, storage string) rendered {
		return rendered{File: shop + "/charts/redis/templates/statefulset.yaml", Kind: "StatefulSet", Namespace: namespace, Name: name,
			Replicas: 1, Images: []string{"redis:7.4"}, Storage: storage}
	}
	deployment := func(name string, replicas int, hostNetwork bool, tag string) rendered {
		return rendered{File: shop + "/templates/deployment.yaml", Kind: "Deployment", Name: name, Replicas: replicas, HostNetwork: hostNetwork,
			Images: []string{"registry.example.com/shop/storefront:" + tag}, Requests: "500m/1Gi"}
	}
	service := func(name string) rendered {
		return rendered{File: shop + "/templates/service.yaml", Kind: "Service", Name: name}
	}
	test := func(name string) rendered { // a hook: helm template includes hooks
		return rendered{File: shop + "/templates/tests/test-connection.yaml", Kind: "Pod", Name: name,
			Annotations: map[string]string{"helm.sh/hook": "test"}, Replicas: 1, Images: []string{"busybox:1.37"}}
	}
	for _, tc := range []struct {
		name string
		opts Options
		want []rendered
	}{
		{"chart defaults", Options{},
			[]rendered{redis("default", "release-redis", "1Gi"), deployment("release-shop", 1, false, "2.4.0"), service("release-shop"), test("release-shop-test")}},
		{"values file, then --set over it, release name and namespace",
			Options{ValuesFiles: []string{shop + "/values-prod.yaml"}, Set: []string{"replicas=5,hostNetwork=true"}, SetString: []string{"image.tag=2.5"},
				ReleaseName: "web", Namespace: "shop"},
			[]rendered{redis("shop", "web-redis", "20Gi"), deployment("web-shop", 5, true, "2.5"), service("web-shop"), test("web-shop-test")}},
		{"subchart disabled by its condition", Options{Set: []string{"redis.enabled=false"}},
			[]rendered{deployment("release-shop", 1, false, "2.4.0"), service("release-shop"), test("release-shop-test")}},
		{"a template empty unless a value is set", Options{Set: []string{"ingress.host=shop.example.com"}},
			[]rendered{redis("default", "release-redis", "1Gi"), deployment("release-shop", 1, false, "2.4.0"),
				{File: shop + "/templates/ingress.yaml", Kind: "Ingress", Name: "release-shop"}, service("release-shop"), test("release-shop-test")}},
		{"--set-file", Options{SetFile: []string{"image.tag=testdata/tag.txt"}},
			[]rendered{redis("default", "release-redis", "1Gi"), deployment("release-shop", 1, false, "3.0.0-rc1"), service("release-shop"), test("release-shop-test")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := expand(t, &tc.opts, shop)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("rendered objects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHelmCapabilities checks that the Kubernetes version reaches the
// templates and the chart's kubeVersion constraint.
func TestHelmCapabilities(t *testing.T) {
	dir := copyChart(t, shop)
	tpl := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caps}\ndata: {version: \"{{ .Capabilities.KubeVersion.Minor }}\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "caps.yaml"), []byte(tpl), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	docs, _, err := (&Options{KubeVersion: "1.35"}).Expand(dir, info, rootOf(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	var caps string
	for _, d := range docs {
		if strings.HasSuffix(d.File, "caps.yaml") {
			caps = string(d.Data)
		}
	}
	if !strings.Contains(caps, `version: "35"`) {
		t.Errorf("caps.yaml rendered as %q, want the minor version 35", caps)
	}
}

// copyChart copies the chart in dir to a temporary directory.
func copyChart(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestHelmArchives renders packaged charts, made here with the Helm SDK: the
// whole chart, and a chart whose subchart is packaged in its charts/.
func TestHelmArchives(t *testing.T) {
	ch, err := loader.LoadDir(shop)
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(tgz) != "shop-1.0.0.tgz" {
		t.Fatalf("packaged as %s", tgz)
	}
	got, err := expand(t, &Options{}, tgz)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		tgz + ":shop/charts/redis/templates/statefulset.yaml",
		tgz + ":shop/templates/deployment.yaml",
		tgz + ":shop/templates/service.yaml",
		tgz + ":shop/templates/tests/test-connection.yaml",
	}
	if diff := cmp.Diff(want, files(got)); diff != "" {
		t.Errorf("files of the packaged chart (-want +got):\n%s", diff)
	}

	dir := copyChart(t, shop)
	redis, err := loader.LoadDir(filepath.Join(dir, "charts", "redis"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "charts", "redis")); err != nil {
		t.Fatal(err)
	}
	if _, err := chartutil.Save(redis, filepath.Join(dir, "charts")); err != nil {
		t.Fatal(err)
	}
	got, err = expand(t, &Options{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if want, got := filepath.Join(dir, "charts", "redis-0.1.0.tgz")+":redis/templates/statefulset.yaml", files(got)[0]; got != want {
		t.Errorf("the packaged subchart's template is %s, want %s", got, want)
	}
}

// TestHelmAlias checks that a subchart used under an alias still points at
// its own files, and takes its values under the alias.
func TestHelmAlias(t *testing.T) {
	dir := copyChart(t, shop)
	chartYAML := filepath.Join(dir, "Chart.yaml")
	data, err := os.ReadFile(chartYAML)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "condition: redis.enabled", "alias: cache", 1))
	if err := os.WriteFile(chartYAML, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := expand(t, &Options{Set: []string{"cache.storage=5Gi"}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := rendered{File: filepath.Join(dir, "charts", "redis", "templates", "statefulset.yaml"), Kind: "StatefulSet", Namespace: "default",
		Name: "release-redis", Replicas: 1, Images: []string{"redis:7.4"}, Storage: "5Gi"}
	if diff := cmp.Diff(want, got[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the aliased subchart's StatefulSet (-want +got):\n%s", diff)
	}
}

func files(objects []rendered) []string {
	var out []string
	for _, o := range objects {
		out = append(out, o.File)
	}
	return out
}

func TestKustomize(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want []rendered
	}{
		{base, []rendered{
			{File: base + "/deployment.yaml", Kind: "Deployment", Name: "web", Replicas: 1, Images: []string{"registry.example.com/web:1.0.0"}, Requests: "250m/512Mi"},
			{File: base + "/service.yaml", Kind: "Service", Name: "web"},
		}},
		{prod, []rendered{ // strategic merge patch from a file: replicas; JSON 6902 inline: the image
			{File: base + "/deployment.yaml", Kind: "Deployment", Namespace: "prod", Name: "prod-web", Replicas: 3, Images: []string{"registry.example.com/web:1.2.0"}, Requests: "250m/512Mi"},
			{File: base + "/service.yaml", Kind: "Service", Namespace: "prod", Name: "prod-web"},
			{File: prod + "/kustomization.yaml", Kind: "ConfigMap", Namespace: "prod", Name: "prod-web-config-dfk4bdbtkk"}, // generated
		}},
		{staging, []rendered{ // strategic merge patch inline: requests; JSON 6902 from a file: the host network
			{File: base + "/deployment.yaml", Kind: "Deployment", Namespace: "staging", Name: "staging-web", Replicas: 1, HostNetwork: true, Images: []string{"registry.example.com/web:1.0.0"}, Requests: "100m/256Mi"},
			{File: base + "/service.yaml", Kind: "Service", Namespace: "staging", Name: "staging-web"},
		}},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			got, err := expand(t, &Options{}, tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			// Annotations are compared too: the origin annotations are gone.
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("rendered objects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKustomizeOwnBuildMetadata checks a kustomization that asks for build
// metadata itself: its choice is kept, and the origin annotation still goes.
func TestKustomizeOwnBuildMetadata(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kustomization.yaml"), "buildMetadata: [originAnnotations, transformerAnnotations]\nnamePrefix: x-\nresources: [cm.yaml]\n")
	write(t, filepath.Join(dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	got, err := expand(t, &Options{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].File != filepath.Join(dir, "cm.yaml") || got[0].Name != "x-a" {
		t.Fatalf("got %+v, want the ConfigMap x-a from cm.yaml", got)
	}
	if _, ok := got[0].Annotations["config.kubernetes.io/origin"]; ok {
		t.Errorf("the origin annotation is left: %v", got[0].Annotations)
	}
	if _, ok := got[0].Annotations["alpha.config.kubernetes.io/transformations"]; !ok {
		t.Errorf("the transformations annotation the kustomization asked for is gone: %v", got[0].Annotations)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestErrors(t *testing.T) {
	noDeps := copyChart(t, shop)
	if err := os.RemoveAll(filepath.Join(noDeps, "charts")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		path string
		want []string // in the message
		is   error
	}{
		{"template error", Options{}, broken, []string{"rendering chart " + broken, "broken/templates/deployment.yaml:10", "image.repository is required"}, nil},
		{"missing file in a kustomization", Options{}, "testdata/kustomize/missing",
			[]string{"building kustomization testdata/kustomize/missing/kustomization.yaml", "does-not-exist.yaml"}, nil},
		{"missing values file", Options{ValuesFiles: []string{"testdata/nope.yaml"}}, shop, []string{"rendering chart " + shop, "reading values", "testdata/nope.yaml"}, fs.ErrNotExist},
		{"bad --set", Options{Set: []string{"a[x]=1"}}, shop, []string{"parsing --set a[x]=1"}, nil},
		{"Kubernetes older than the chart accepts", Options{KubeVersion: "1.19"}, shop, []string{"chart requires kubeVersion >=1.20.0-0", "Kubernetes v1.19"}, nil},
		{"bad Kubernetes version", Options{KubeVersion: "one"}, shop, []string{`parsing Kubernetes version "one"`}, nil},
		{"bad release name", Options{ReleaseName: "Web_1"}, shop, []string{`release name "Web_1"`}, nil},
		{"dependency missing from charts/", Options{}, noDeps, []string{"missing from charts/", "redis"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := os.Stat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			docs, handled, err := tc.opts.Expand(tc.path, info, rootOf(t, tc.path))
			if !handled || err == nil || docs != nil {
				t.Fatalf("Expand = %d documents, handled %v, error %v; want an error", len(docs), handled, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

// TestNotHandled checks what Expand leaves to the loader.
func TestNotHandled(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "plain", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	write(t, filepath.Join(dir, "notes.tgz"), "not gzip at all")
	var notChart bytes.Buffer
	gz := gzip.NewWriter(&notChart)
	tw := tar.NewWriter(gz)
	data := []byte("hello\n")
	if err := tw.WriteHeader(&tar.Header{Name: "backup/readme.txt", Mode: 0o644, Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "backup.tar.gz"), notChart.String())

	for _, p := range []string{"plain", "plain/cm.yaml", "notes.tgz", "backup.tar.gz"} {
		path := filepath.Join(dir, p)
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		docs, handled, err := (&Options{}).Expand(path, info, rootOf(t, path))
		if handled || err != nil || docs != nil {
			t.Errorf("Expand(%s) = %d documents, handled %v, error %v; want it left alone", p, len(docs), handled, err)
		}
	}
}

func TestAddFlags(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{"-f", "a.yaml", "--values", "b.yaml,c.yaml", "--set", "x=1,y=2", "--set", "z={a,b}",
		"--set-string", "v=010", "--set-file", "cert=tls.crt", "--release-name", "web", "--allow-remote", "--render-timeout", "10s"})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{ValuesFiles: []string{"a.yaml", "b.yaml", "c.yaml"}, Set: []string{"x=1,y=2", "z={a,b}"},
		SetString: []string{"v=010"}, SetFile: []string{"cert=tls.crt"}, ReleaseName: "web", AllowRemote: true, Timeout: 10 * time.Second}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	var defaults Options
	defaults.AddFlags(pflag.NewFlagSet("check", pflag.ContinueOnError))
	if defaults.ReleaseName != DefaultReleaseName || defaults.Timeout != DefaultTimeout || defaults.AllowRemote {
		t.Errorf("defaults: release name %q, timeout %s, remote %v; want %q, %s, false", defaults.ReleaseName, defaults.Timeout, defaults.AllowRemote, DefaultReleaseName, DefaultTimeout)
	}
}

// rootOf is manifest.Root of path, as the loader gives it to Expand.
func rootOf(t *testing.T, path string) string {
	t.Helper()
	root, err := manifest.Root(path)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
