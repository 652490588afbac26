package iamapi

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/fargatekit/fargatekit/internal/emulator/awsquery"
	"github.com/fargatekit/fargatekit/internal/emulator/clusterconfig"
)

// APIVersion is the IAM API version of the requests and of the responses'
// namespace.
const APIVersion = "2010-05-08"

const xmlns = "https://iam.amazonaws.com/doc/" + APIVersion + "/"

// IsRequest reports whether r is an IAM query request: a POST of a form to
// / whose SigV4 credential scope names iam, or, unsigned, whose Version is
// APIVersion. Reading the form leaves r.Body for the handler.
func IsRequest(r *http.Request) bool { return awsquery.Service(r) == awsquery.IAM }

// Actions are the IAM actions the emulator serves.
var Actions = []string{"GetRole", "ListAttachedRolePolicies"}

// createDate is when the emulator's roles were made: a fixed time, since
// they are the configuration's.
var createDate = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Server answers IAM requests about the roles of one emulator's
// configuration. It is safe for concurrent use: the roles do not change.
type Server struct {
	roles []role
	log   *slog.Logger
}

// role is a role as the Server serves it.
type role struct {
	clusterconfig.Role
	arn string
}

// NewServer returns the IAM API of cfg's roles (cfg.Roles).
func NewServer(cfg *clusterconfig.Config, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log}
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
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := uuid.NewString()
	body, err := io.ReadAll(io.LimitReader(r.Body, awsquery.MaxBodyBytes+1))
	if err != nil || len(body) > awsquery.MaxBodyBytes {
		s.fail(w, requestID, apiError{http.StatusBadRequest, "InvalidRequest", "The request body could not be read or is too large."})
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		s.fail(w, requestID, apiError{http.StatusBadRequest, "InvalidRequest", "The request body is not a valid query string."})
		return
	}
	action := form.Get("Action")
	s.log.Debug("IAM API request", "action", action)
	var out any
	var aerr *apiError
	switch action {
	case "GetRole":
		out, aerr = s.getRole(form, requestID)
	case "ListAttachedRolePolicies":
		out, aerr = s.listAttachedRolePolicies(form, requestID)
	case "":
		aerr = &apiError{http.StatusBadRequest, "MissingAction", "The request must contain the parameter Action."}
	default:
		aerr = &apiError{http.StatusBadRequest, "InvalidAction", fmt.Sprintf("The action %s is not valid for this web service (the emulator serves %s).", action, strings.Join(Actions, ", "))}
	}
	if aerr != nil {
		s.fail(w, requestID, *aerr)
		return
	}
	s.write(w, http.StatusOK, out)
}

// apiError is an IAM error: its HTTP status, code and message. Errors of
// status 5xx are the service's (Type Receiver), the others the caller's
// (Sender).
type apiError struct {
	status        int
	code, message string
}

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

func (s *Server) fail(w http.ResponseWriter, requestID string, e apiError) {
	typ := "Sender"
	if e.status >= 500 {
		typ = "Receiver"
	}
	s.write(w, e.status, errorResponse{Xmlns: xmlns, Error: xmlErr{typ, e.code, e.message}, RequestID: requestID})
}

func (s *Server) write(w http.ResponseWriter, status int, v any) {
	data, err := xml.Marshal(v)
	if err != nil {
		s.log.Error("IAM API cannot encode its answer", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(data)
}

type responseMetadata struct {
	RequestID string `xml:"RequestId"`
}

// validationError is IAM's answer to a parameter that breaks a constraint
// of the API's model, worded as AWS's services word them.
func validationError(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "ValidationError", "1 validation error detected: " + fmt.Sprintf(format, args...)}
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
	return &apiError{http.StatusNotFound, "NoSuchEntity", fmt.Sprintf("The role with name %s cannot be found.", name)}
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
// PathPrefix, MaxItems (default 100) at a time from Marker.
func (s *Server) listAttachedRolePolicies(form url.Values, requestID string) (any, *apiError) {
	r, aerr := s.lookup(form)
	if aerr != nil {
		return nil, aerr
	}
	maxItems := 100
	if v, ok := form["MaxItems"]; ok {
		n, err := strconv.Atoi(v[0])
		switch {
		case err != nil:
			return nil, validationError("Value '%s' at 'maxItems' failed to satisfy constraint: Member must be an integer", v[0])
		case n < 1:
			return nil, validationError("Value '%d' at 'maxItems' failed to satisfy constraint: Member must have value greater than or equal to 1", n)
		case n > 1000:
			return nil, validationError("Value '%d' at 'maxItems' failed to satisfy constraint: Member must have value less than or equal to 1000", n)
		}
		maxItems = n
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
	start := 0
	if m := form.Get("Marker"); m != "" {
		n, ok := decodeMarker(m)
		if !ok || n > len(all) {
			// The text is the emulator's (unconfirmed).
			return nil, validationError("Value '%s' at 'marker' failed to satisfy constraint: Member must be a marker returned by a previous call", m)
		}
		start = n
	}
	end := min(start+maxItems, len(all))
	resp := listAttachedRolePoliciesResponse{Xmlns: xmlns, Metadata: responseMetadata{requestID}}
	resp.Result.AttachedPolicies.Members = all[start:end]
	if end < len(all) {
		resp.Result.IsTruncated, resp.Result.Marker = true, encodeMarker(end)
	}
	return resp, nil
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
