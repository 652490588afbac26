package awsquery

import (
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Error is a query-protocol error: its HTTP status, code and message.
type Error struct {
	Status        int
	Code, Message string
}

// Action answers one action: the response document of the request's form,
// which names requestID in its metadata, or the error.
type Action func(form url.Values, requestID string) (any, *Error)

// API serves one service's query protocol: it reads the form, dispatches
// its Action and writes the answer in XML. The services differ only in
// their actions, the shape of their error document and their content type.
type API struct {
	// Name names the service in log lines ("EC2").
	Name string
	// Actions are the actions served, by name.
	Actions map[string]Action
	// ErrorDocument is the service's error response for e.
	ErrorDocument func(e Error, requestID string) any
	// ContentType is the responses' Content-Type.
	ContentType string
	// Log receives a debug line per request; nil is slog.Default().
	Log *slog.Logger
}

// Served returns the names of the actions served, sorted.
func (a *API) Served() []string {
	names := make([]string, 0, len(a.Actions))
	for name := range a.Actions {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ServeHTTP answers one query request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := uuid.NewString()
	out, aerr := a.answer(r, requestID)
	if aerr != nil {
		a.write(w, aerr.Status, a.ErrorDocument(*aerr, requestID))
		return
	}
	a.write(w, http.StatusOK, out)
}

// Refuse answers e in the service's error document, without reading the
// request.
func (a *API) Refuse(w http.ResponseWriter, e Error) {
	a.write(w, e.Status, a.ErrorDocument(e, uuid.NewString()))
}

func (a *API) answer(r *http.Request, requestID string) (any, *Error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil || len(body) > MaxBodyBytes {
		return nil, &Error{http.StatusBadRequest, "InvalidRequest", "The request body could not be read or is too large."}
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, &Error{http.StatusBadRequest, "InvalidRequest", "The request body is not a valid query string."}
	}
	action := form.Get("Action")
	a.log().Debug(a.Name+" API request", "action", action)
	if action == "" {
		return nil, &Error{http.StatusBadRequest, "MissingAction", "The request must contain the parameter Action."}
	}
	do, ok := a.Actions[action]
	if !ok {
		return nil, &Error{http.StatusBadRequest, "InvalidAction", fmt.Sprintf("The action %s is not valid for this web service (the emulator serves %s).", action, strings.Join(a.Served(), ", "))}
	}
	return do(form, requestID)
}

func (a *API) write(w http.ResponseWriter, status int, v any) {
	data, err := xml.Marshal(v)
	if err != nil {
		a.log().Error(a.Name+" API cannot encode its answer", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", a.ContentType)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(data)
}

func (a *API) log() *slog.Logger {
	if a.Log == nil {
		return slog.Default()
	}
	return a.Log
}
