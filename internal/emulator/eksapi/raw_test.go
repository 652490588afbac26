package eksapi_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type rawResult struct {
	Status  int
	Type    string
	Message string
}

// do sends a raw HTTP/1.1 request to the server, the target as written, and
// reads the status, error type and message.
func (e *env) do(t testing.TB, method, target, body string) rawResult {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	// Written on the side: the server may answer (413-like cases) before
	// reading the whole body.
	go func() {
		_, _ = fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: eks.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", method, target, len(body), body)
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	got := rawResult{Status: resp.StatusCode, Type: resp.Header.Get("x-amzn-errortype")}
	if got.Type == "" {
		return got // net/http's own answer, not JSON
	}
	var msg struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Errorf("%s %s: the body is not JSON: %v: %q", method, target, err, data)
	}
	got.Message = msg.Message
	return got
}

// TestMalformedRequests sends requests no SDK would send: each gets a 4xx
// with an EKS error type, never a 5xx.
func TestMalformedRequests(t *testing.T) {
	const profiles = "/clusters/fargatekit/fargate-profiles"
	badToken := base64.RawURLEncoding.EncodeToString([]byte("other/p01"))
	tests := []struct {
		name, method, target, body string
		want                       rawResult
	}{
		{"truncated JSON", "POST", profiles, `{"fargateProfileName":`, rawResult{400, "BadRequestException", "The request body is not valid JSON."}},
		{"not an object", "POST", profiles, `[]`, rawResult{400, "BadRequestException", "The request body is not valid JSON."}},
		{"string", "POST", profiles, `"web"`, rawResult{400, "BadRequestException", "The request body is not valid JSON."}},
		{"trailing data", "POST", profiles, `{} {}`, rawResult{400, "BadRequestException", "The request body is not valid JSON."}},
		{"name of the wrong type", "POST", profiles, `{"fargateProfileName":5}`, rawResult{400, "BadRequestException", "The request body is not valid: fargateProfileName must be of type string."}},
		{"selectors of the wrong type", "POST", profiles, `{"selectors":"default"}`, rawResult{400, "BadRequestException", "The request body is not valid: selectors must be of type list."}},
		{"namespace of the wrong type", "POST", profiles, `{"selectors":[{"namespace":1}]}`, rawResult{400, "BadRequestException", "The request body is not valid: selectors.namespace must be of type string."}},
		{"labels of the wrong type", "POST", profiles, `{"selectors":[{"namespace":"a","labels":["x"]}]}`, rawResult{400, "BadRequestException", "The request body is not valid: selectors.labels must be of type structure."}},
		{"tags of the wrong type", "POST", profiles, `{"tags":[]}`, rawResult{400, "BadRequestException", "The request body is not valid: tags must be of type structure."}},
		{"subnets of the wrong type", "POST", profiles, `{"subnets":[1]}`, rawResult{400, "BadRequestException", "The request body is not valid: subnets must be of type string."}},
		{"empty body", "POST", profiles, ``, rawResult{400, "InvalidParameterException", "fargateProfileName is required."}},
		{"null", "POST", profiles, `null`, rawResult{400, "InvalidParameterException", "fargateProfileName is required."}},
		{"null selector", "POST", profiles, `{"fargateProfileName":"a","podExecutionRoleArn":"` + roleARN + `","selectors":[null]}`, rawResult{400, "InvalidParameterException", "Fargate Profile must have at least one selector with at least one namespace value."}},
		{"role not an ARN", "POST", profiles, `{"fargateProfileName":"a","podExecutionRoleArn":"admin","selectors":[{"namespace":"a"}]}`, rawResult{400, "InvalidParameterException", `podExecutionRoleArn "admin" is not an IAM role ARN.`}},
		{"name with a slash", "POST", profiles, `{"fargateProfileName":"a/b"}`, rawResult{400, "InvalidParameterException", `fargateProfileName "a/b" is invalid: it must start with a letter or digit, contain only letters, digits, - and _, and be at most 100 characters long.`}},
		{"body too large", "POST", profiles, `{"tags":{"a":"` + strings.Repeat("x", 2<<20) + `"}}`, rawResult{400, "BadRequestException", "The request body cannot be read: http: request body too large."}},
		{"unknown cluster", "POST", "/clusters/prod/fargate-profiles", `{}`, rawResult{404, "ResourceNotFoundException", "No cluster found for name: prod."}},
		{"maxResults 0", "GET", profiles + "?maxResults=0", ``, rawResult{400, "InvalidParameterException", "maxResults must be an integer between 1 and 100."}},
		{"maxResults 101", "GET", profiles + "?maxResults=101", ``, rawResult{400, "InvalidParameterException", "maxResults must be an integer between 1 and 100."}},
		{"maxResults -1", "GET", profiles + "?maxResults=-1", ``, rawResult{400, "InvalidParameterException", "maxResults must be an integer between 1 and 100."}},
		{"maxResults huge", "GET", profiles + "?maxResults=99999999999999999999", ``, rawResult{400, "InvalidParameterException", "maxResults must be an integer between 1 and 100."}},
		{"maxResults not a number", "GET", profiles + "?maxResults=ten", ``, rawResult{400, "InvalidParameterException", "maxResults must be an integer between 1 and 100."}},
		{"nextToken not base64", "GET", profiles + "?nextToken=%21%21", ``, rawResult{400, "InvalidParameterException", "The nextToken is not valid."}},
		{"nextToken of something else", "GET", profiles + "?nextToken=" + badToken, ``, rawResult{400, "InvalidParameterException", "The nextToken is not valid."}},
		{"ListClusters maxResults 0", "GET", "/clusters?maxResults=0", ``, rawResult{400, "InvalidParameterException", "maxResults must be an integer between 1 and 100."}},
		{"bad query escape", "GET", profiles + "?maxResults=%zz", ``, rawResult{400, "BadRequestException", `The query string is not valid: invalid URL escape "%zz".`}},
		{"bad path escape", "GET", "/clusters/%zz", ``, rawResult{400, "", ""}}, // refused by net/http
		{"unknown path", "GET", "/nodes", ``, rawResult{404, "NotFoundException", "No operation GET /nodes in this EKS API emulator."}},
		{"root", "GET", "/", ``, rawResult{404, "NotFoundException", "No operation GET / in this EKS API emulator."}},
		{"wrong method", "PUT", profiles, `{}`, rawResult{404, "NotFoundException", "No operation PUT /clusters/fargatekit/fargate-profiles in this EKS API emulator."}},
		{"too deep", "GET", profiles + "/a/b", ``, rawResult{404, "NotFoundException", "No operation GET /clusters/fargatekit/fargate-profiles/a/b in this EKS API emulator."}},
		{"empty profile name", "GET", profiles + "/", ``, rawResult{404, "ResourceNotFoundException", "No Fargate Profile found with name: ."}},
		{"escaped profile name", "DELETE", profiles + "/a%2Fb", ``, rawResult{404, "ResourceNotFoundException", "No Fargate Profile found with name: a/b."}},
	}
	e := newEnv(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.do(t, tt.method, tt.target, tt.body)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tt.method, tt.target, diff)
			}
		})
	}
	if n := len(e.store.Profiles()); n != 0 {
		t.Errorf("malformed requests created %d profiles", n)
	}
}

// TestHead checks that HEAD is served like GET, without a body.
func TestHead(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := http.Head(e.url + "/clusters/fargatekit")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD DescribeCluster: %s", resp.Status)
	}
}
