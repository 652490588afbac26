package iamapi

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/awsquery"
)

// APIVersion is the IAM API version of the requests and of the responses'
// namespace.
const APIVersion = "2010-05-08"

const xmlns = "https://iam.amazonaws.com/doc/" + APIVersion + "/"

// IsRequest reports whether r is an IAM query request: a POST of a form to
// / whose SigV4 credential scope names iam, or, unsigned, whose Version is
// APIVersion. Reading the form leaves r.Body for the handler.
func IsRequest(r *http.Request) bool { return awsquery.Service(r) == awsquery.IAM }

// createDate is when the emulator's roles were made: a fixed time, since
// they are the configuration's.
var createDate = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Server answers IAM requests about the roles of one emulator's
// configuration. It is safe for concurrent use: the roles do not change.
type Server struct {
	roles []role
	api   awsquery.API
}

// role is a role as the Server serves it.
type role struct {
	clusterconfig.Role
	arn string
}

// NewServer returns the IAM API of cfg's roles (cfg.Roles).
func NewServer(cfg *clusterconfig.Config, log *slog.Logger) *Server {
	s := &Server{}
	s.api = awsquery.API{
		Name: "IAM", Log: log, ContentType: "text/xml", ErrorDocument: errorDocument,
		Actions: map[string]awsquery.Action{"GetRole": s.getRole, "ListAttachedRolePolicies": s.listAttachedRolePolicies,
			"ListRolePolicies": s.listRolePolicies},
	}
	for _, r := range cfg.Roles() {
		s.roles = append(s.roles, role{Role: r, arn: cfg.RoleARN(r.Name)})
	}
	return s
}

// TrustPolicy returns the trust policy (a JSON document, not URL-encoded)
// of the role whose ARN is roleARN, and whether the emulator's IAM has
// that role.
func (s *Server) TrustPolicy(roleARN string) (string, bool) {
	for _, r := range s.roles {
		if r.arn == roleARN {
			return r.TrustPolicy, true
		}
	}
	return "", false
}

// find returns the role named name.
func (s *Server) find(name string) (role, bool) {
	for _, r := range s.roles {
		if r.Name == name {
			return r, true
		}
	}
	return role{}, false
}

// ServeHTTP answers one query request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.api.ServeHTTP(w, r) }

// Refuse answers e as IAM does, without reading the request.
func (s *Server) Refuse(w http.ResponseWriter, e awsquery.Error) { s.api.Refuse(w, e) }

// apiError is an IAM error. Errors of status 5xx are the service's (Type
// Receiver), the others the caller's (Sender).
type apiError = awsquery.Error

type errorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	Error     xmlErr   `xml:"Error"`
	RequestID string   `xml:"RequestId"`
}

type xmlErr struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// errorDocument is IAM's ErrorResponse for e.
func errorDocument(e awsquery.Error, requestID string) any {
	typ := "Sender"
	if e.Status >= 500 {
		typ = "Receiver"
	}
	return errorResponse{Xmlns: xmlns, Error: xmlErr{typ, e.Code, e.Message}, RequestID: requestID}
}

type responseMetadata struct {
	RequestID string `xml:"RequestId"`
}

// validationError is IAM's answer to a parameter that breaks a constraint
// of the API's model, worded as AWS's services word them.
func validationError(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: "ValidationError", Message: "1 validation error detected: " + fmt.Sprintf(format, args...)}
}

// roleName reads the RoleName parameter, refusing what IAM's model does.
func roleName(form url.Values) (string, *apiError) {
	name, ok := form["RoleName"]
	switch {
	case !ok:
		return "", validationError("Value null at 'roleName' failed to satisfy constraint: Member must not be null")
	case len(name[0]) > 64:
		return "", validationError("Value '%s' at 'roleName' failed to satisfy constraint: Member must have length less than or equal to 64", name[0])
	case !clusterconfig.ValidRoleName(name[0]):
		return "", validationError("Value '%s' at 'roleName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+", name[0])
	}
	return name[0], nil
}

// noSuchRole is IAM's answer for a role that does not exist.
func noSuchRole(name string) *apiError {
	return &apiError{Status: http.StatusNotFound, Code: "NoSuchEntity", Message: fmt.Sprintf("The role with name %s cannot be found.", name)}
}

// lookup reads RoleName and returns that role.
func (s *Server) lookup(form url.Values) (role, *apiError) {
	name, aerr := roleName(form)
	if aerr != nil {
		return role{}, aerr
	}
	r, ok := s.find(name)
	if !ok {
		return role{}, noSuchRole(name)
	}
	return r, nil
}

// xmlRole is IAM's Role structure.
type xmlRole struct {
	Path                     string `xml:"Path"`
	RoleName                 string `xml:"RoleName"`
	RoleID                   string `xml:"RoleId"`
	Arn                      string `xml:"Arn"`
	CreateDate               string `xml:"CreateDate"`
	AssumeRolePolicyDocument string `xml:"AssumeRolePolicyDocument"`
	MaxSessionDuration       int    `xml:"MaxSessionDuration"`
	RoleLastUsed             struct {
	} `xml:"RoleLastUsed"`
}

type getRoleResponse struct {
	XMLName  xml.Name         `xml:"GetRoleResponse"`
	Xmlns    string           `xml:"xmlns,attr"`
	Role     xmlRole          `xml:"GetRoleResult>Role"`
	Metadata responseMetadata `xml:"ResponseMetadata"`
}

func (s *Server) getRole(form url.Values, requestID string) (any, *apiError) {
	r, aerr := s.lookup(form)
	if aerr != nil {
		return nil, aerr
	}
	return getRoleResponse{Xmlns: xmlns, Metadata: responseMetadata{requestID}, Role: xmlRole{
		Path: "/", RoleName: r.Name, RoleID: roleID(r.arn), Arn: r.arn, CreateDate: createDate.Format(time.RFC3339),
		AssumeRolePolicyDocument: Encode(r.TrustPolicy), MaxSessionDuration: 3600,
	}}, nil
}

// roleID is a role's unique ID, as IAM writes them ("AROA" and 17 letters
// and digits), derived from its ARN so that it stays the same.
func roleID(arn string) string {
	sum := sha256.Sum256([]byte(arn))
	return "AROA" + base32.StdEncoding.EncodeToString(sum[:])[:17]
}

// Encode URL-encodes a policy document as IAM returns it: every byte but
// letters, digits and -_.~ percent-encoded (spaces as %20, not +), which
// url.QueryUnescape and Python's urllib.parse.unquote (the AWS CLI) both
// decode.
func Encode(doc string) string {
	return strings.ReplaceAll(url.QueryEscape(doc), "+", "%20")
}

type attachedPolicy struct {
	PolicyName string `xml:"PolicyName"`
	PolicyArn  string `xml:"PolicyArn"`
}

type listAttachedRolePoliciesResponse struct {
	XMLName xml.Name `xml:"ListAttachedRolePoliciesResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Result  struct {
		// AttachedPolicies is written even when empty, as IAM does.
		AttachedPolicies struct {
			Members []attachedPolicy `xml:"member"`
		} `xml:"AttachedPolicies"`
		IsTruncated bool   `xml:"IsTruncated"`
		Marker      string `xml:"Marker,omitempty"`
	} `xml:"ListAttachedRolePoliciesResult"`
	Metadata responseMetadata `xml:"ResponseMetadata"`
}

// listAttachedRolePolicies lists a role's attached policies, those under
// PathPrefix, a page at a time (paginate).
func (s *Server) listAttachedRolePolicies(form url.Values, requestID string) (any, *apiError) {
	r, aerr := s.lookup(form)
	if aerr != nil {
		return nil, aerr
	}
	prefix := form.Get("PathPrefix")
	if prefix != "" && !strings.HasPrefix(prefix, "/") {
		return nil, validationError("Value '%s' at 'pathPrefix' failed to satisfy constraint: Member must satisfy regular expression pattern: \\u002F[\\u0021-\\u007F]*", prefix)
	}
	var all []attachedPolicy
	for _, arn := range r.AttachedPolicies {
		path, name := policyPath(arn)
		if strings.HasPrefix(path, prefix) {
			all = append(all, attachedPolicy{PolicyName: name, PolicyArn: arn})
		}
	}
	start, end, next, aerr := paginate(form, len(all))
	if aerr != nil {
		return nil, aerr
	}
	resp := listAttachedRolePoliciesResponse{Xmlns: xmlns, Metadata: responseMetadata{requestID}}
	resp.Result.AttachedPolicies.Members = all[start:end]
	resp.Result.IsTruncated, resp.Result.Marker = next != "", next
	return resp, nil
}

type listRolePoliciesResponse struct {
	XMLName xml.Name `xml:"ListRolePoliciesResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Result  struct {
		// PolicyNames is written even when empty, as IAM does.
		PolicyNames struct {
			Members []string `xml:"member"`
		} `xml:"PolicyNames"`
		IsTruncated bool   `xml:"IsTruncated"`
		Marker      string `xml:"Marker,omitempty"`
	} `xml:"ListRolePoliciesResult"`
	Metadata responseMetadata `xml:"ResponseMetadata"`
}

// listRolePolicies lists the names of a role's inline policies, a page at
// a time (paginate).
func (s *Server) listRolePolicies(form url.Values, requestID string) (any, *apiError) {
	r, aerr := s.lookup(form)
	if aerr != nil {
		return nil, aerr
	}
	start, end, next, aerr := paginate(form, len(r.InlinePolicies))
	if aerr != nil {
		return nil, aerr
	}
	resp := listRolePoliciesResponse{Xmlns: xmlns, Metadata: responseMetadata{requestID}}
	resp.Result.PolicyNames.Members = r.InlinePolicies[start:end]
	resp.Result.IsTruncated, resp.Result.Marker = next != "", next
	return resp, nil
}

// paginate reads MaxItems (default 100) and Marker, and returns the page of
// n items they ask for ([start, end)) and the marker of the next page, ""
// when it is the last.
func paginate(form url.Values, n int) (start, end int, next string, aerr *apiError) {
	maxItems := 100
	if v, ok := form["MaxItems"]; ok {
		m, err := strconv.Atoi(v[0])
		switch {
		case err != nil:
			return 0, 0, "", validationError("Value '%s' at 'maxItems' failed to satisfy constraint: Member must be an integer", v[0])
		case m < 1:
			return 0, 0, "", validationError("Value '%d' at 'maxItems' failed to satisfy constraint: Member must have value greater than or equal to 1", m)
		case m > 1000:
			return 0, 0, "", validationError("Value '%d' at 'maxItems' failed to satisfy constraint: Member must have value less than or equal to 1000", m)
		}
		maxItems = m
	}
	if m := form.Get("Marker"); m != "" {
		i, ok := decodeMarker(m)
		if !ok || i > n {
			// The text is the emulator's (unconfirmed).
			return 0, 0, "", validationError("Value '%s' at 'marker' failed to satisfy constraint: Member must be a marker returned by a previous call", m)
		}
		start = i
	}
	end = min(start+maxItems, n)
	if end < n {
		next = encodeMarker(end)
	}
	return start, end, next, nil
}

// policyPath splits a managed policy's ARN into its path ("/" or
// "/service-role/") and name.
func policyPath(arn string) (path, name string) {
	_, resource, _ := strings.Cut(arn, ":policy/")
	i := strings.LastIndex(resource, "/")
	return "/" + resource[:i+1], resource[i+1:]
}

// A marker is the index of the next item, opaque to the caller.
func encodeMarker(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("fargatekit:" + strconv.Itoa(n)))
}

func decodeMarker(m string) (int, bool) {
	data, err := base64.RawURLEncoding.DecodeString(m)
	if err != nil {
		return 0, false
	}
	v, ok := strings.CutPrefix(string(data), "fargatekit:")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 0
}
