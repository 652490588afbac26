// Package awsquery tells apart the requests in AWS's query protocol that
// share the emulator's AWS endpoint: EC2's and IAM's both POST a form to /.
// [Service] names the service a request is for, from its SigV4 credential
// scope, else from the API version the form names.
package awsquery

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Services as SigV4 credential scopes name them.
const (
	EC2 = "ec2"
	IAM = "iam"
)

// APIVersions are the API versions the query requests of each service
// name in their Version field.
var APIVersions = map[string]string{EC2: "2016-11-15", IAM: "2010-05-08"}

// MaxBodyBytes bounds the form bodies [Service] reads.
const MaxBodyBytes = 1 << 20

// IsForm reports whether r has the form of a query request: a POST to /
// with a form body. EKS's rest-json API never posts to /.
func IsForm(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/" &&
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
}

// Service returns the service a query request is for (EC2 or IAM), or ""
// when r is not a query request or names neither. The service of the
// Authorization header's credential scope (".../iam/aws4_request") wins;
// else the form's Version field decides. Reading the form leaves r.Body
// as it was for the handler: Service puts what it read back in front of
// the rest.
func Service(r *http.Request) string {
	if !IsForm(r) {
		return ""
	}
	switch s := scopeService(r); s {
	case EC2, IAM:
		return s
	}
	form, ok := peekForm(r)
	if !ok {
		return ""
	}
	for service, version := range APIVersions {
		if form.Get("Version") == version {
			return service
		}
	}
	return ""
}

// scopeService is the service of the request's SigV4 credential scope
// (Credential=AKID/DATE/REGION/SERVICE/aws4_request), from its
// Authorization header or a presigned URL's X-Amz-Credential.
func scopeService(r *http.Request) string {
	cred := r.URL.Query().Get("X-Amz-Credential")
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "AWS4-") {
		_, after, ok := strings.Cut(auth, "Credential=")
		if !ok {
			return ""
		}
		cred, _, _ = strings.Cut(after, ",")
	}
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 5 || parts[4] != "aws4_request" {
		return ""
	}
	return parts[3]
}

// peekForm parses r's form body, at most MaxBodyBytes, and puts the bytes
// it read back in front of the rest of r.Body.
func peekForm(r *http.Request) (url.Values, bool) {
	if r.Body == nil {
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) > MaxBodyBytes {
		return nil, false
	}
	form, err := url.ParseQuery(string(body))
	return form, err == nil
}

// readCloser reads from a reader and closes the original body.
type readCloser struct {
	io.Reader
	io.Closer
}
