package eksapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
)

// FuzzCreateFargateProfile sends random CreateFargateProfile bodies, twice,
// then describes and lists: no answer may be a 5xx, every answer is JSON and
// every error carries its type. Seeds: below and testdata/fuzz.
func FuzzCreateFargateProfile(f *testing.F) {
	for _, s := range []string{
		`{"fargateProfileName":"web","podExecutionRoleArn":"` + roleARN + `","selectors":[{"namespace":"default","labels":{"app":"web"}}],"subnets":["subnet-private1"],"tags":{"a":"b"},"clientRequestToken":"t"}`,
		`{"fargateProfileName":"eks-web","podExecutionRoleArn":"` + roleARN + `","selectors":[{"namespace":"*"}]}`,
		`{"fargateProfileName":"web","podExecutionRoleArn":"` + roleARN + `","selectors":[{"namespace":"a"}],"subnets":["subnet-public1"]}`,
		`{"fargateProfileName":"w","podExecutionRoleArn":"arn:aws:iam::111122223333:role/a/b","selectors":[null]}`,
		`{"fargateProfileName":5}`, `{"selectors":{}}`, `{`, `[]`, `null`, ``, `{} []`, `{"tags":{"a":null}}`,
	} {
		f.Add(s)
	}
	cfg := clusterconfig.Default()
	f.Fuzz(func(t *testing.T, body string) {
		store, err := eksapi.NewStore(cfg, t.TempDir(), eksapi.WithClock(testingclock.NewFakeClock(t0)), eksapi.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		h := eksapi.NewServer(cfg, store, &fakeCluster{}).Handler()
		var req struct {
			Name any `json:"fargateProfileName"`
		}
		_ = json.Unmarshal([]byte(body), &req)
		name, _ := req.Name.(string)
		const profiles = "/clusters/fargatekit/fargate-profiles"
		send(t, h, []request{
			{http.MethodPost, profiles, body},
			{http.MethodPost, profiles, body},
			{http.MethodGet, profiles + "/" + url.PathEscape(name), ""},
			{http.MethodGet, profiles + "?maxResults=1", ""},
			{http.MethodDelete, profiles + "/" + url.PathEscape(name), ""},
		})
	})
}

// FuzzNodegroupUpdates sends random CreateNodegroup, UpdateNodegroupConfig,
// UpdateNodegroupVersion and UpdateClusterVersion bodies to a 1.34 cluster
// with node group "system", then describes and lists: no answer may be a
// 5xx, every answer is JSON and every error carries its type.
func FuzzNodegroupUpdates(f *testing.F) {
	for _, s := range []string{
		`{"nodegroupName":"web","nodeRole":"arn:aws:iam::111122223333:role/n","subnets":["subnet-private1"],"scalingConfig":{"minSize":0,"maxSize":2,"desiredSize":1},"version":"1.33","releaseVersion":"1.33.1-20250101"}`,
		`{"scalingConfig":{"desiredSize":3},"labels":{"addOrUpdateLabels":{"a":"b"},"removeLabels":["c"]}}`,
		`{"version":"1.35","releaseVersion":"1.35.0-20261101","force":true}`,
		`{"version":"1.34","clientRequestToken":"t"}`,
		`{"filter":{"statuses":["ERROR"],"kubernetesVersions":["1.35"]},"maxResults":1}`, `{"maxResults":0,"nextToken":"x"}`,
		`{"scalingConfig":{"minSize":-1}}`, `{"version":1.34}`, `{"labels":[]}`, `{`, `null`, ``,
	} {
		f.Add(s)
	}
	cfg := clusterconfig.Default()
	cfg.KubernetesVersion = "1.34"
	cfg.NodeGroups = []clusterconfig.NodeGroup{{Name: "system", AvailabilityZones: cfg.AvailabilityZones, DesiredCapacity: 2, MaxSize: 3, InstanceType: "m6i.large", KubeletVersion: "1.34", ReleaseVersion: clusterconfig.LatestRelease("1.34")}}
	f.Fuzz(func(t *testing.T, body string) {
		store, err := eksapi.NewStore(cfg, t.TempDir(), eksapi.WithClock(testingclock.NewFakeClock(t0)), eksapi.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		h := eksapi.NewServer(cfg, store, &fakeCluster{}).Handler()
		const c = "/clusters/fargatekit"
		send(t, h, []request{
			{http.MethodPost, c + "/node-groups", body},
			{http.MethodPost, c + "/node-groups/system/update-config", body},
			{http.MethodPost, c + "/node-groups/system/update-version", body},
			{http.MethodPost, c + "/updates", body},
			{http.MethodPost, c + "/insights", body},
			{http.MethodGet, c + "/insights/" + url.PathEscape(body), ""},
			{http.MethodGet, c + "/node-groups/system", ""},
			{http.MethodGet, c + "/node-groups?maxResults=1", ""},
			{http.MethodGet, c + "/updates?nodegroupName=system", ""},
			{http.MethodGet, c, ""},
			{http.MethodDelete, c + "/node-groups/system", ""},
		})
	})
}

type request struct{ method, target, body string }

// send sends the requests in turn: no answer may be a 5xx, every answer is
// JSON and every error carries its type.
func send(t *testing.T, h http.Handler, reqs []request) {
	t.Helper()
	for _, r := range reqs {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(r.method, "http://eks.test"+r.target, strings.NewReader(r.body)))
		if w.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", r.method, r.target, r.body, w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %s %q: the answer is not JSON: %s", r.method, r.target, r.body, w.Body)
		}
		if w.Code != http.StatusOK && w.Header().Get("x-amzn-errortype") == "" {
			t.Fatalf("%s %s %q: %d without x-amzn-errortype", r.method, r.target, r.body, w.Code)
		}
	}
}
