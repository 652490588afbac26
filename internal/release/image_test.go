package release

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// registry starts crane's registry on a loopback port for the test and
// returns its host:port.
func registry(t *testing.T, crane string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := exec.Command(crane, "registry", "serve", "--address", addr)
	if err := c.Start(); err != nil {
		t.Fatalf("starting crane registry serve: %v", err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("crane's registry at %s does not answer: %v", addr, err)
		}
	}
}

// TestImage builds the container image as a user does, with `make image` (ko,
// no Docker engine), and inspects it with crane: an index of linux/amd64 and
// linux/arm64 images that run /ko-app/fargatekit as the non-root user 65532,
// on the base's passwd and CA certificates; the binary for this machine,
// taken out of the image, prints the version the build was given and the
// repository's commit.
//
// The base is hack/base-image.sh's stand-in for distroless/static (this
// machine reaches no public registry), served by crane's registry; the
// release builds on the real one.
func TestImage(t *testing.T) {
	crane := need(t, "crane")
	need(t, "ko")
	reg := registry(t, crane)
	base := strings.TrimSpace(must(t, root, nil, filepath.Join(root, "hack", "base-image.sh"), reg))
	layout := filepath.Join(work, "image") // ko names the image after the path, which must be lowercase
	const version = "v0.0.0-image-test"
	must(t, root, nil, "make", "-s", "image", "VERSION="+version, "KO_DEFAULTBASEIMAGE="+base, "IMAGE_LAYOUT="+layout)

	ref := reg + "/fargatekit:test"
	must(t, root, nil, crane, "push", layout, ref)
	var index struct {
		Manifests []struct {
			Platform struct{ OS, Architecture string }
		}
	}
	if err := json.Unmarshal([]byte(must(t, root, nil, crane, "manifest", ref)), &index); err != nil {
		t.Fatalf("the image's index: %v", err)
	}
	var platforms []string
	for _, m := range index.Manifests {
		platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	slices.Sort(platforms)
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("the image's platforms (-want +got):\n%s", diff)
	}
	for _, p := range platforms {
		var cfg struct {
			Architecture string
			Config       struct {
				User       string
				Entrypoint []string
			}
		}
		if err := json.Unmarshal([]byte(must(t, root, nil, crane, "config", "--platform", p, ref)), &cfg); err != nil {
			t.Fatalf("the %s image's config: %v", p, err)
		}
		if "linux/"+cfg.Architecture != p || cfg.Config.User != "65532" || !slices.Equal(cfg.Config.Entrypoint, []string{"/ko-app/fargatekit"}) {
			t.Errorf("the %s image: %+v; want user 65532 and entrypoint /ko-app/fargatekit", p, cfg)
		}
	}

	fs := filepath.Join(t.TempDir(), "fs.tar")
	must(t, root, nil, crane, "export", "--platform", "linux/"+runtime.GOARCH, ref, fs)
	files := untar(t, fs, false)
	if !strings.Contains(string(files["etc/passwd"]), "nonroot:x:65532:65532:") || len(files["etc/ssl/certs/ca-certificates.crt"]) == 0 {
		t.Errorf("the image has no nonroot user or no CA certificates: /etc/passwd %q", files["etc/passwd"])
	}
	head := strings.TrimSpace(must(t, root, nil, "git", "rev-parse", "HEAD"))
	binary := writeExecutable(t, files["ko-app/fargatekit"])
	withoutGoPlugins(t, binary)
	info := versionOf(t, binary)
	if info.Version != version || info.Commit != head || info.BuildDate == "" || info.Platform != "linux/"+runtime.GOARCH {
		t.Errorf("the image's binary says %+v, want version %s of commit %s", info, version, head)
	}
}

// TestChartImage checks that the charts (spread's, watch's) run the image
// make image and the release build: its default repository is the one ko pushes to, and
// its default tag is the chart's appVersion, which has the form of the
// release tags the image is pushed with (v1.2.3).
func TestChartImage(t *testing.T) {
	for _, name := range []string{"fargatekit-spread", "fargatekit-watch"} {
		t.Run(name, func(t *testing.T) { chartImage(t, filepath.Join(root, "deploy", "charts", name)) })
	}
}

func chartImage(t *testing.T, chart string) {
	var values struct {
		Image struct{ Repository, Tag string }
	}
	data, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err == nil {
		err = yaml.Unmarshal(data, &values)
	}
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(makefile), "KO_DOCKER_REPO="+values.Image.Repository+" ") || values.Image.Tag != "" {
		t.Errorf("the chart's image is %s:%q; make image builds another repository, or the tag does not default to the appVersion", values.Image.Repository, values.Image.Tag)
	}
	var meta struct{ AppVersion string }
	data, err = os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	if err == nil {
		err = yaml.Unmarshal(data, &meta)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(meta.AppVersion) {
		t.Errorf("the chart's appVersion %q is not a release tag (v1.2.3), which the image is tagged with", meta.AppVersion)
	}
	tmpl, err := os.ReadFile(filepath.Join(chart, "templates", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tmpl), `{{ .Values.image.tag | default .Chart.AppVersion }}`) {
		t.Error("the chart's deployment does not default the image's tag to the chart's appVersion")
	}
}
