package awsquery_test

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/fargatekit/fargatekit/internal/emulator/awsquery"
)

type echo struct {
	XMLName   xml.Name `xml:"EchoResponse"`
	Name      string   `xml:"Name"`
	RequestID string   `xml:"RequestId"`
}

type failure struct {
	XMLName   xml.Name `xml:"Failure"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	RequestID string   `xml:"RequestId"`
}

// TestAPI: the form's Action is dispatched; the protocol's own errors
// (no Action, an unknown one, a body that is not a form) go through the
// service's error document, with the status of the error.
func TestAPI(t *testing.T) {
	say := func(form url.Values, requestID string) (any, *awsquery.Error) {
		if form.Get("Name") == "" {
			return nil, &awsquery.Error{Status: http.StatusNotFound, Code: "NoName", Message: "say a name"}
		}
		return echo{Name: form.Get("Name"), RequestID: requestID}, nil
	}
	api := &awsquery.API{
		Name:        "Test",
		ContentType: "text/xml",
		Actions:     map[string]awsquery.Action{"Echo": say, "Acho": say},
		ErrorDocument: func(e awsquery.Error, requestID string) any {
			return failure{Code: e.Code, Message: e.Message, RequestID: requestID}
		},
	}
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"action", "Action=Echo&Name=shop", http.StatusOK, "<Name>shop</Name>"},
		{"the action's error", "Action=Echo", http.StatusNotFound, "<Code>NoName</Code><Message>say a name</Message>"},
		{"no action", "Name=shop", http.StatusBadRequest, "<Code>MissingAction</Code>"},
		{"unknown action", "Action=Shout", http.StatusBadRequest, "The action Shout is not valid for this web service (the emulator serves Acho, Echo)."},
		{"not a form", "Action=%zz", http.StatusBadRequest, "<Code>InvalidRequest</Code>"},
		{"too large", "Action=Echo&Name=" + strings.Repeat("x", awsquery.MaxBodyBytes), http.StatusBadRequest, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			api.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body)))
			body := w.Body.String()
			if w.Code != tc.status || !strings.Contains(body, tc.want) || !strings.Contains(body, "<RequestId>") {
				t.Errorf("status %d, body %s; want %d with %q", w.Code, body, tc.status, tc.want)
			}
			if ct := w.Header().Get("Content-Type"); ct != "text/xml" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}
