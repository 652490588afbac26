package emulator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/fargatekit/fargatekit/internal/emulator/awsquery"
	"github.com/fargatekit/fargatekit/internal/emulator/ec2api"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/internal/emulator/iamapi"
)

// awsEndpoint is the emulator's AWS endpoint: EKS (rest-json), EC2 and IAM
// (both in the query protocol: a form POSTed to /, told apart by the
// service of the SigV4 credential scope, else by the form's Version).
//
// It refuses, in the answering service's own error format, what would let
// a web page the user visits drive the emulator through its loopback port:
//   - a request without a SigV4 signature (an Authorization header, or a
//     presigned URL's X-Amz-Algorithm) gets 403 and
//     MissingAuthenticationToken(Exception), as from AWS. The signature is
//     not checked: the emulator takes any credentials, and the AWS CLI and
//     SDKs sign with the ones `emulator env` exports. A browser sends no
//     Authorization header to another origin without a CORS preflight,
//     which the emulator does not answer;
//   - a request whose Host is not a loopback name (DNS rebinding: the page's
//     own domain resolved to 127.0.0.1) gets 403 AccessDenied(Exception).
func awsEndpoint(eks *eksapi.Server, ec2 *ec2api.Server, iam *iamapi.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var query interface {
			http.Handler
			Refuse(http.ResponseWriter, awsquery.Error)
		}
		switch {
		case iamapi.IsRequest(r):
			query = iam
		case ec2api.IsRequest(r):
			query = ec2
		}
		refuse := func(status int, code, message string) {
			if query != nil {
				query.Refuse(w, awsquery.Error{Status: status, Code: code, Message: message})
				return
			}
			eks.Refuse(w, status, code+"Exception", message)
		}
		switch {
		case !loopbackHost(r.Host):
			refuse(http.StatusForbidden, "AccessDenied", "The emulator answers requests to a loopback name (127.0.0.1, localhost, ::1) only, not to "+r.Host+".")
		case !signed(r):
			refuse(http.StatusForbidden, "MissingAuthenticationToken", "Missing Authentication Token: sign the request with SigV4 (any credentials do; see fargatekit emulator env).")
		case query != nil:
			query.ServeHTTP(w, r)
		default:
			eks.Handler().ServeHTTP(w, r)
		}
	})
}

// signed reports whether r carries a SigV4 signature, in its Authorization
// header or in a presigned URL's query.
func signed(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") ||
		r.URL.Query().Get("X-Amz-Algorithm") == "AWS4-HMAC-SHA256"
}

// loopbackHost reports whether host (a Host header, with or without a port)
// names the loopback interface.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Credentials are the credentials `emulator env` exports; the emulator
// takes any.
var Credentials = aws.Credentials{AccessKeyID: "emulator", SecretAccessKey: "emulator"}

// Sign signs r for service in region with Credentials, as the AWS SDKs do
// (r's body, if any, is read and put back).
func Sign(r *http.Request, service, region string) error {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return err
		}
		_ = r.Body.Close()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	sum := sha256.Sum256(body)
	return v4.NewSigner().SignHTTP(context.Background(), Credentials, r, hex.EncodeToString(sum[:]), service, region, time.Now())
}
