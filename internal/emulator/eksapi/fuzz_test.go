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

	"github.com/fargatekit/fargatekit/internal/emulator/clusterconfig"
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
		h := eksapi.NewServer(cfg, store, fakeCluster{}).Handler()
		var req struct {
			Name any `json:"fargateProfileName"`
		}
		_ = json.Unmarshal([]byte(body), &req)
		name, _ := req.Name.(string)
		const profiles = "/clusters/fargatekit/fargate-profiles"
		for _, r := range []struct{ method, target, body string }{
			{http.MethodPost, profiles, body},
			{http.MethodPost, profiles, body},
			{http.MethodGet, profiles + "/" + url.PathEscape(name), ""},
			{http.MethodGet, profiles + "?maxResults=1", ""},
			{http.MethodDelete, profiles + "/" + url.PathEscape(name), ""},
		} {
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
	})
}
