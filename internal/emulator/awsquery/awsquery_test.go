package awsquery_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/fargatekit/fargatekit/internal/emulator/awsquery"
)

// TestService: the credential scope's service wins, else the Version
// decides, and the body stays whole for the handler.
func TestService(t *testing.T) {
	const (
		form    = "application/x-www-form-urlencoded; charset=utf-8"
		iamAuth = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/iam/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"
		ec2Auth = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"
		stsAuth = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/sts/aws4_request, SignedHeaders=host, Signature=abc"
	)
	iamBody := "Action=GetRole&Version=2010-05-08&RoleName=r"
	ec2Body := "Action=DescribeSubnets&Version=2016-11-15"
	tests := []struct {
		name, method, path, contentType, auth, body string
		want                                        string
	}{
		{"IAM by scope", "POST", "/", form, iamAuth, "Action=GetRole&RoleName=r", awsquery.IAM},
		{"EC2 by scope", "POST", "/", form, ec2Auth, "Action=DescribeSubnets", awsquery.EC2},
		{"the scope wins over the Version", "POST", "/", form, ec2Auth, iamBody, awsquery.EC2},
		{"IAM by Version, unsigned", "POST", "/", form, "", iamBody, awsquery.IAM},
		{"EC2 by Version, unsigned", "POST", "/", form, "", ec2Body, awsquery.EC2},
		{"another service's scope: the Version decides", "POST", "/", form, stsAuth, iamBody, awsquery.IAM},
		{"neither scope nor Version", "POST", "/", form, "", "Action=GetRole", ""},
		{"an unknown Version", "POST", "/", form, "", "Action=GetRole&Version=2011-06-15", ""},
		{"a malformed Authorization", "POST", "/", form, "AWS4-HMAC-SHA256 Signature=abc", ec2Body, awsquery.EC2},
		{"not a form", "POST", "/", "application/json", iamAuth, "{}", ""},
		{"not to /", "POST", "/clusters", form, iamAuth, iamBody, ""},
		{"not a POST", "GET", "/", form, iamAuth, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.contentType)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			if got := awsquery.Service(r); got != tt.want {
				t.Errorf("Service = %q, want %q", got, tt.want)
			}
			if got := awsquery.Service(r); got != tt.want {
				t.Errorf("Service a second time = %q, want %q", got, tt.want)
			}
			body, err := io.ReadAll(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != tt.body {
				t.Errorf("the handler reads %q, want the whole body %q", body, tt.body)
			}
		})
	}
}

// TestPresigned: a presigned URL's X-Amz-Credential names the service.
func TestPresigned(t *testing.T) {
	q := url.Values{"X-Amz-Credential": {"AKID/20260101/us-east-1/iam/aws4_request"}}
	r := httptest.NewRequest(http.MethodPost, "/?"+q.Encode(), strings.NewReader("Action=GetRole"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if got := awsquery.Service(r); got != awsquery.IAM {
		t.Errorf("Service = %q, want iam", got)
	}
}

// TestLargeBody: a body larger than MaxBodyBytes names no service by its
// Version, and reaches the handler whole.
func TestLargeBody(t *testing.T) {
	body := "Version=2010-05-08&Pad=" + strings.Repeat("x", awsquery.MaxBodyBytes)
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if got := awsquery.Service(r); got != "" {
		t.Errorf("Service = %q, want none", got)
	}
	got, err := io.ReadAll(r.Body)
	if err != nil || len(got) != len(body) {
		t.Errorf("the handler reads %d bytes (%v), want %d", len(got), err, len(body))
	}
}
